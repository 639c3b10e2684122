"""How fast grading a class is, beside plain nbgrader: prints figures, asserts nothing.

    python benchmarks/grading_speed.py [--students 24] [--assignment attention_basics] [--quick]
    python benchmarks/grading_speed.py --against COMMIT [--rounds 3] [--students 24] [...]

On one class (a third the instructor's solution, a third partly wrong, a third stubs), in one
run, side by side:
1. plain `nbgrader autograde` (its default configuration: the notebook in a Jupyter kernel,
   visible tests only, one submission after another, one call);
2. a bare kernel run of every notebook (nbclient, a fresh kernel each: the floor of any
   kernel-based grading);
3. `attention-course autograde` with 1 and 2 jobs (hidden graders, every piece of student
   code in the sandbox, no kernel), without and with the feedback;
4. `attention-course check` of one notebook as a whole process, and how far it is when the
   first student cell runs.
For each: wall time, submissions per minute, CPU-seconds per submission (the whole process
tree, sandboxes included, from a cgroup where the machine has one) and the peak memory of the
largest single process; beside plain nbgrader, the ratios of wall time and of CPU-seconds (on a
machine that others use, the second is the one to compare across runs). For ours, each
submission's CPU-seconds by stage, from the grading jobs (ATTENTION_COURSE_STAGES, see
attention_course/trace.py): the notebook run and the graders (each with its sandboxes' CPU time,
read from their own cgroups), the feedback, nbgrader's other steps and the gradebook (every
Gradebook call and database statement); what no stage holds (the client, the jobs' start-up and
imports) is the whole tree's cgroup minus the stages. Dask's are benchmarks/dask_grading.py's.

With --against COMMIT, instead: this checkout's grading cost beside that commit's, in one run
(a git worktree of it, its engine first on the path, its own course and sample class), the two
alternating so that a machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cputime import CpuClock  # noqa: E402

from attention_course.classgrade.nbgrader_api import copy_course  # noqa: E402
from attention_course.cli.samples import sample_notebooks  # noqa: E402

COURSE_ROOT = Path(__file__).resolve().parent.parent  # this repository's course

BIN = Path(sys.executable).parent
KINDS = ("demo-instructor", "demo-partial", "demo-stub")
PLAIN_CONFIG = """c = get_config()  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "plain"
"""


def write_class(root: Path, assignment: str, count: int, course: Path = COURSE_ROOT) -> list[str]:
    samples = sample_notebooks(assignment, course)
    students = []
    for i in range(count):
        student = f"s{i:03d}"
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(samples[KINDS[i % 3]], folder / f"{assignment}.ipynb")
        (folder / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC\n")
        students.append(student)
    return students


STAGES = ("notebook run", "graders", "feedback", "nbgrader steps", "gradebook")


class Row:
    def __init__(self, name: str, count: int, run: tuple, stages: list[dict] | None = None):
        self.name, self.count = name, count
        self.wall, self.cpu, self.peak = run[0], run[1], run[2]
        self.stages = stages or []

    def line(self, plain: Row | None) -> str:
        ratio = f"{plain.wall / self.wall:5.2f}x" if plain is not None else "     "
        cpu = f"{plain.cpu / self.cpu:5.2f}x" if plain is not None else ""
        return (
            f"{self.name:<50} {self.wall:7.1f} s {60 * self.count / self.wall:7.1f}/min "
            f"{self.cpu / self.count:6.2f} cpu-s {self.peak:6.0f} MB  {ratio}  {cpu}"
        )

    def stage_lines(self) -> list[str]:
        """CPU-seconds and wall seconds per submission in each stage, and what is left."""
        if not self.stages:
            return []
        per = len(self.stages)
        lines = [f"   {self.name}: {per} submissions, per submission by stage"]
        known = 0.0
        names = [*STAGES, *sorted({n for s in self.stages for n in s["stages"]} - set(STAGES))]
        for name in names:
            cpu = sum(s["stages"].get(name, [0.0, 0.0])[0] for s in self.stages)
            wall = sum(s["stages"].get(name, [0.0, 0.0])[1] for s in self.stages)
            known += cpu
            lines.append(f"     {name:<40} {cpu / per:6.3f} cpu-s {wall / per:6.3f} s")
        rest = self.cpu - known
        name = "outside the stages (client, start-up)"
        lines.append(f"     {name:<40} {rest / per:6.3f} cpu-s ({rest:.1f} in all)")
        sandboxes = sum(s["sandboxes"] for s in self.stages) / per
        peak = max(s["sandbox_peak"] for s in self.stages) / 1024**2
        lines.append(f"     sandboxes per submission {sandboxes:.2f}, the largest {peak:.0f} MB")
        return lines


def timed(cpu: CpuClock, argv: list[str], cwd: Path, env: dict | None = None):
    """(wall seconds, CPU-seconds of the whole tree, peak MB of its largest waited-for process,
    what it printed)."""
    start_wall, start_cpu = time.perf_counter(), cpu.seconds()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if proc.returncode != 0:
        print(f"   ({' '.join(argv[:3])} exited {proc.returncode}: {text[-300:]!r})")
    wall, used = time.perf_counter() - start_wall, cpu.seconds() - start_cpu
    return wall, used, usage.ru_maxrss / 1024, text


def plain_nbgrader(tmp: Path, assignment: str, count: int, cpu: CpuClock) -> Row:
    root = tmp / "plain"
    root.mkdir()
    (root / "nbgrader_config.py").write_text(PLAIN_CONFIG.format(root=str(root)))
    (root / "source").mkdir()
    subprocess.run(["cp", "-r", str(COURSE_ROOT / "source" / assignment), str(root / "source")])
    nbgrader = str(BIN / "nbgrader")
    env = dict(os.environ, PATH=f"{BIN}:{os.environ.get('PATH', '')}")  # nbgrader runs alembic
    argv = [nbgrader, "generate_assignment", assignment]
    subprocess.run(argv, cwd=root, capture_output=True, env=env)
    write_class(root, assignment, count)
    run = timed(cpu, [nbgrader, "autograde", assignment, "--create"], root, env)
    return Row("plain nbgrader autograde (1 process)", count, run)


def bare_kernel(tmp: Path, assignment: str, count: int, cpu: CpuClock) -> Row:
    folder = tmp / "bare"
    folder.mkdir()
    samples = sample_notebooks(assignment, COURSE_ROOT)
    paths = []
    for i in range(count):
        path = folder / f"n{i:03d}.ipynb"
        nbformat.write(samples[KINDS[i % 3]], path)
        paths.append(str(path))
    code = (
        "import sys, nbformat\nfrom nbclient import NotebookClient\n"
        "for p in sys.argv[1:]:\n"
        "    nb = nbformat.read(p, 4)\n"
        "    NotebookClient(nb, timeout=30, allow_errors=True, kernel_name='python3').execute()\n"
    )
    run = timed(cpu, [sys.executable, "-c", code, *paths], folder)
    return Row("bare kernel run (nbclient, fresh kernel each)", count, run)


def ours(
    tmp: Path,
    assignment: str,
    count: int,
    jobs: int,
    feedback: bool,
    cpu: CpuClock,
    version: Path | None = None,
) -> Row:
    """`attention-course autograde` of a class; with `version`, a checkout of another commit
    (its engine first on the path, its course)."""
    label = f"{jobs}-{int(feedback)}-{version.name if version else 'this'}"
    root = tmp / f"ours-{label}"
    env = dict(os.environ)
    if version is None:
        copy_course(root, COURSE_ROOT)
        write_class(root, assignment, count)
    else:  # that commit's engine copies its course and writes its class
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(version), env.get("PYTHONPATH")]))
        code = (
            "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
            "import grading_speed as g; "
            "g.write_class(g.copy_course(Path(sys.argv[2]), g.COURSE_ROOT), sys.argv[3], "
            "int(sys.argv[4]))"
        )
        argv = [sys.executable, "-c", code, str(version / "benchmarks"), str(root), assignment]
        subprocess.run([*argv, str(count)], env=env, check=True)
    cli = str(BIN / "attention-course")
    argv = [cli, "release", assignment, "--course", str(root)]
    subprocess.run(argv, capture_output=True, env=env)
    argv = [cli, "autograde", assignment, "--course", str(root), "--jobs", str(jobs)]
    argv += [] if feedback else ["--no-feedback"]
    name = f"attention-course autograde --jobs {jobs}" + ("" if feedback else " --no-feedback")
    if version is not None:
        name += f" ({version.name})"
    stages = tmp / f"stages-{label}.jsonl"
    run = timed(cpu, argv, root, dict(env, ATTENTION_COURSE_STAGES=str(stages)))
    lines = stages.read_text().splitlines() if stages.exists() else []
    return Row(name, count, run, [json.loads(line) for line in lines])


def check(tmp: Path, assignment: str, cpu: CpuClock) -> None:
    path = tmp / f"{assignment}.ipynb"
    nbformat.write(sample_notebooks(assignment, COURSE_ROOT)["demo-instructor"], path)
    cli = str(BIN / "attention-course")
    course = copy_course(tmp / "check-course", COURSE_ROOT)
    walls, cpus, marks = [], [], []
    for i in range(5):
        trace = tmp / f"trace-{i}.txt"
        env = dict(os.environ, ATTENTION_COURSE_TRACE=str(trace))
        wall, used, _, _ = timed(cpu, [cli, "check", str(path), "--course", str(course)], tmp, env)
        walls.append(wall)
        cpus.append(used)
        first = trace.read_text().splitlines()[0].split("\t")
        marks.append((float(first[1]), float(first[2])))
    print(
        f"check of one notebook, whole process (median of 5): {statistics.median(walls):.2f} s, "
        f"{statistics.median(cpus):.2f} CPU-s; the first student cell runs after "
        f"{statistics.median(m[0] for m in marks):.2f} s and "
        f"{statistics.median(m[1] for m in marks):.2f} CPU-s"
    )


def against(tmp: Path, ref: str, args: argparse.Namespace, cpu: CpuClock) -> None:
    """Grading cost per submission of this checkout beside commit `ref`, in one run: the two
    alternate, `--rounds` times each (--jobs 2, with the feedback), and the medians compare."""
    tree = tmp / ref.replace("/", "_")
    git = ["git", "-C", str(COURSE_ROOT)]
    argv = [*git, "worktree", "add", "--detach", str(tree), ref]
    made = subprocess.run(argv, capture_output=True)
    if made.returncode != 0:
        sys.exit(f"grading_speed.py: cannot check out {ref}: {made.stderr.decode().strip()}")
    try:
        sides: dict[str, list[Row]] = {ref: [], "this checkout": []}
        for _ in range(args.rounds):
            for side, version in ((ref, tree), ("this checkout", None)):
                row = ours(tmp, args.assignment, args.students, 2, True, cpu, version)
                print(row.line(None), flush=True)
                sides[side].append(row)
                shutil.rmtree(tmp / f"ours-2-1-{version.name if version else 'this'}")
        per = {s: statistics.median(r.cpu / r.count for r in rows) for s, rows in sides.items()}
        walls = {s: statistics.median(r.wall / r.count for r in rows) for s, rows in sides.items()}
        for side in sides:
            print(f"{side:<50} median {per[side]:6.2f} cpu-s, {walls[side]:6.2f} s per submission")
        change = per["this checkout"] / per[ref] - 1
        print(f"grading cost per submission, this checkout against {ref}: {change:+.1%} (CPU)")
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(tree)], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=24)
    parser.add_argument("--assignment", default="attention_basics")
    parser.add_argument("--skip-plain", action="store_true", help="leave out 1. and 2.")
    parser.add_argument(
        "--quick", action="store_true", help="of 2. and 3., only --jobs 2 with the feedback"
    )
    parser.add_argument(
        "--against",
        metavar="COMMIT",
        help="instead: grading cost per submission of this checkout beside that commit's",
    )
    parser.add_argument("--rounds", type=int, default=3, help="with --against: runs of each side")
    args = parser.parse_args()
    cpu = CpuClock()
    print(
        f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; CPU from {cpu.source}"
    )
    print(f"class: {args.students} submissions of {args.assignment}: correct, partly wrong, stubs")
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(
        f"{'':<50} {'wall':>9} {'rate':>11} {'per submission':>12} {'peak':>9}  vs plain "
        "(wall, CPU)"
    )
    with tempfile.TemporaryDirectory(prefix="attention-bench-") as tmp:
        tmp = Path(tmp)
        if args.against:
            against(tmp, args.against, args, cpu)
            cpu.close()
            return
        plain = None
        if not args.skip_plain:
            plain = plain_nbgrader(tmp, args.assignment, args.students, cpu)
            print(plain.line(None), flush=True)
            if not args.quick:
                bare = bare_kernel(tmp, args.assignment, args.students, cpu)
                print(bare.line(plain), flush=True)
        rows = []
        for jobs, feedback in ((2, True),) if args.quick else ((1, False), (2, False), (2, True)):
            rows.append(ours(tmp, args.assignment, args.students, jobs, feedback, cpu))
            print(rows[-1].line(plain), flush=True)
        check(tmp, args.assignment, cpu)
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        for row in rows:
            print("\n".join(row.stage_lines()))
    cpu.close()


if __name__ == "__main__":
    main()
