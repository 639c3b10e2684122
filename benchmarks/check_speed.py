"""How long `attention-course check` of one notebook takes as a whole process: prints figures,
asserts nothing.

    python benchmarks/check_speed.py [--runs 5] [--assignment attention_basics] [--notebook NB]

Grades one correct notebook (the instructor's solution, or NB) with `attention-course check`,
`--runs` times, each a whole process as a user starts it, and prints the median and the spread
of: wall time, CPU-seconds of every process of the run (check, bubblewrap, the sandboxes;
counted by a cgroup of the benchmark's own where the machine allows, benchmarks/cputime.py)
and the peak memory of the largest single process. Beside it, the floors no check can go
below on this machine as it is now: `python -c pass`, `attention-course --help` (the command's
own start) and one sandbox that imports numpy (what every check starts once). Then where one
run's time goes: its import time by package (`python -X importtime`), and the wall time of
its main steps (a cProfile of one run: the profiler's own cost inflates what is Python).

The bytecode of the engine is cached as an installed wheel's is (pip compiles it): one run
first, not counted, writes it into a cache folder of the benchmark's own
(PYTHONPYCACHEPREFIX), never into the repository; `--no-bytecode` writes none
(PYTHONDONTWRITEBYTECODE: what pip compiled is used, an editable install's engine is compiled
in every run). Every check must give full marks, or the benchmark says so.
The machine's load average is printed before and after: other work on it shows there.
"""

from __future__ import annotations

import argparse
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cputime import CpuClock  # noqa: E402

COURSE_ROOT = Path(__file__).resolve().parent.parent  # this repository's course
BIN = Path(sys.executable).parent
CLI = BIN / "attention-course"

# The steps of one check, as cProfile names them: (label, file suffix, function name).
STEPS = (
    ("the command line (parser, its imports)", "cli/main.py", "build_parser"),
    ("check, in all", "cli/check_command.py", "check"),
    ("  reading the notebook", "grading/notebook.py", "read_notebook"),
    ("  waiting for the sandbox's probe", "sandbox/confined.py", "probe"),
    ("  importing the graders", "grading/runner.py", "collect"),
    ("  the grader tests, the sandbox's run in them", "grading/runner.py", "run_tests"),
    ("    the sandboxed worker, in all", "sandbox/program.py", "run_worker"),
    ("      starting it", "sandbox/confined.py", "start"),
    ("      stopping it", "sandbox/confined.py", "close"),
)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


def environment(cache: Path | None) -> dict[str, str]:
    """The runs' environment: this one's, with a bytecode cache of the benchmark's own (or
    none at all)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPYCACHEPREFIX",)}
    env.pop("ATTENTION_COURSE_TRACE", None)
    if cache is None:  # what pip compiled is used; nothing is written
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def timed(cpu: CpuClock, argv: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """(wall seconds, CPU-seconds of the whole process tree, peak MiB of its largest waited-for
    process, what it printed on stdout); exits the benchmark if the command failed."""
    start_wall, start_cpu = time.perf_counter(), cpu.seconds()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=COURSE_ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall, used = time.perf_counter() - start_wall, cpu.seconds() - start_cpu
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, said = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {proc.returncode}: {said.strip()[-500:]}")
    return wall, used, usage.ru_maxrss / 1024, text


def summary(label: str, runs: list[tuple[float, float, float, str]]) -> str:
    walls, cpus, peaks = ([r[i] for r in runs] for i in range(3))
    return (
        f"{label:<34} {statistics.median(walls):6.3f} s wall ({min(walls):.3f}-{max(walls):.3f}), "
        f"{statistics.median(cpus):6.3f} CPU-s ({min(cpus):.3f}-{max(cpus):.3f}), "
        f"{max(peaks):5.1f} MiB"
    )


def write_solution(tmp: Path, assignment: str, env: dict[str, str]) -> Path:
    """The instructor's solution as a student's notebook, written by another process (this
    one stays small: a child's peak memory counts what it had before it started the run)."""
    path = tmp / f"{assignment}.ipynb"
    code = (
        "import sys, nbformat\n"
        "from pathlib import Path\n"
        "from attention_course.cli.samples import sample_notebooks\n"
        "nb = sample_notebooks(sys.argv[1], Path(sys.argv[2]))['demo-instructor']\n"
        "nbformat.write(nb, sys.argv[3])\n"
    )
    argv = [sys.executable, "-c", code, assignment, str(COURSE_ROOT), str(path)]
    subprocess.run(argv, env=env, check=True, cwd=COURSE_ROOT)
    return path


def full_marks(text: str) -> bool:
    import json

    results = json.loads(text)
    return results["score"] == results["max_score"] > 0


def sandbox_floor(cpu: CpuClock, runs: int, env: dict[str, str]) -> list:
    """One grading worker's sandbox (numpy imported), started and closed as grading starts its
    worker, `runs` times: a fresh sandbox each, forked from the process's zygote."""
    code = (
        "import sys, time\n"
        "from attention_course.sandbox import confined\n"
        "from attention_course.sandbox.confined import Confined\n"
        "from attention_course.settings import Limits\n"
        "confined.require()\n"
        "for _ in range(int(sys.argv[1])):\n"
        "    with Confined('worker.py', {}, Limits()) as worker:\n"
        "        worker.start(time.monotonic() + 60)\n"
    )
    one = timed(cpu, [sys.executable, "-c", code, "0"], env)  # the probe and set-up alone
    many = timed(cpu, [sys.executable, "-c", code, str(runs)], env)
    each = tuple((many[i] - one[i]) / runs for i in range(2))
    return [(each[0], each[1], many[2], "")]


def import_breakdown(argv: list[str], env: dict[str, str], top: int = 12) -> None:
    """Import time of one run by top-level package (self time, so nothing counts twice)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        capture_output=True,
        text=True,
        cwd=COURSE_ROOT,
    )
    if proc.returncode != 0:
        sys.exit(f"check under -X importtime exited {proc.returncode}: {proc.stderr[-500:]}")
    by_package: dict[str, float] = defaultdict(float)
    engine: dict[str, float] = defaultdict(float)
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
            continue
        own, _, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
        package = name.split(".")[0]
        by_package[package] += int(own) / 1e6
        if package == "attention_course":
            engine[".".join(name.split(".")[:2])] += int(own) / 1e6
    total = sum(by_package.values())
    print(f"\nimport time of one check: {total:.3f} s in all, by package (self time):")
    for package, seconds in sorted(by_package.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {package:<40} {seconds:6.3f} s")
    print("  of which the engine's own wings:")
    for wing, seconds in sorted(engine.items(), key=lambda kv: -kv[1])[:8]:
        print(f"    {wing:<38} {seconds:6.3f} s")


def step_breakdown(argv: list[str], env: dict[str, str], tmp: Path) -> None:
    """Wall time of the main steps of one run, from a cProfile of it."""
    out = tmp / "check.prof"
    subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(out), *argv],
        env=env,
        capture_output=True,
        check=True,
        cwd=COURSE_ROOT,
    )
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    total = max(v[3] for v in stats.values())
    print(f"\nwhere one check's time goes (cProfile, wall, {total:.3f} s under the profiler):")
    for label, suffix, name in STEPS:
        found = [v for (file, _, fn), v in stats.items() if fn == name and file.endswith(suffix)]
        seconds = sum(v[3] for v in found)
        calls = sum(v[1] for v in found)
        print(f"  {label:<44} {seconds:6.3f} s" + (f"  ({calls} calls)" if calls > 1 else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each (the median is shown)")
    parser.add_argument("--assignment", default="attention_basics")
    parser.add_argument("--notebook", type=Path, help="a correct notebook (default: the solution)")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="write no bytecode: a module with none (an editable install's) is compiled each run",
    )
    args = parser.parse_args()
    cpu = CpuClock()
    print(f"machine: {load()}; Python {sys.version.split()[0]}; CPU from {cpu.source}")
    with tempfile.TemporaryDirectory(prefix="attention-check-bench-") as folder:
        tmp = Path(folder)
        env = environment(None if args.no_bytecode else tmp / "bytecode")
        written = "none written (what has none is compiled each run)"
        print(f"bytecode: {written if args.no_bytecode else 'cached'}")
        path = args.notebook or write_solution(tmp, args.assignment, env)
        check = [str(CLI), "check", str(path.resolve()), "--json"]
        if not full_marks(timed(cpu, check, env)[3]):  # also writes the bytecode cache
            sys.exit(f"{path}: not full marks, so not a correct notebook")
        floors = {
            label: [timed(cpu, argv, env) for _ in range(args.runs)]
            for label, argv in (
                ("python -c pass", [sys.executable, "-c", "pass"]),
                ("attention-course --help", [str(CLI), "--help"]),
            )
        }
        floors["a grading worker's sandbox (zygote)"] = sandbox_floor(cpu, args.runs, env)
        runs = [timed(cpu, check, env) for _ in range(args.runs)]
        wrong = sum(not full_marks(r[3]) for r in runs)
        print(f"\ncheck of one notebook ({path.name}), {args.runs} runs, median (min-max):")
        print(summary("attention-course check", runs))
        print("floors on this machine now:")
        for label, found in floors.items():
            print(summary(f"  {label}", found))
        if wrong:
            print(f"WRONG: {wrong} of the runs did not give full marks")
        import_breakdown(["-m", "attention_course.cli.main", *check[1:]], env)
        step_breakdown(["-m", "attention_course.cli.main", *check[1:]], env, tmp)
    print(f"\nmachine after: {load()}")
    cpu.close()


if __name__ == "__main__":
    main()
