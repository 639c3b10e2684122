"""Where one submission's time goes: prints figures, asserts nothing.

    python benchmarks/profile_submission.py [--students N] [--kind demo-instructor]

Grades N submissions of attention_basics one after another in this process, as a grading job
does, and splits each one's wall time and CPU-seconds (this process and every process it
started: sandboxes, the grader) into the steps of nbgrader's autograde: the sanitizing pass,
the notebook run in the sandbox, the grading outside it (graders + worker sandboxes),
nbgrader's remaining steps and gradebook writes, and the feedback; and how many sandboxes each
submission starts. The first submission also
pays the imports; the median of the others is what every further submission costs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cputime import CpuClock  # noqa: E402

from attention_course import trace  # noqa: E402
from attention_course.classgrade.nbgrader_api import (  # noqa: E402
    add_students,
    api,
    autograde,
    copy_course,
    generate_feedback,
    register,
)
from attention_course.cli.samples import sample_notebooks  # noqa: E402
from attention_course.grading import preprocessors  # noqa: E402
from attention_course.sandbox import confined  # noqa: E402

COURSE_ROOT = Path(__file__).resolve().parent.parent  # this repository's course

ASSIGNMENT = "attention_basics"
STEPS: dict[str, list[tuple[float, float]]] = defaultdict(list)
SANDBOXES: list[int] = []  # sandboxes each submission's autograde started


CPU = CpuClock()


def clocks() -> tuple[float, float]:
    return time.perf_counter(), CPU.seconds()


def timed(name: str, fn):
    def wrapper(*args, **kwargs):
        wall, cpu = clocks()
        try:
            return fn(*args, **kwargs)
        finally:
            wall2, cpu2 = clocks()
            STEPS[name].append((wall2 - wall, cpu2 - cpu))

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=6)
    parser.add_argument("--kind", default="demo-instructor", help="which sample submission")
    args = parser.parse_args()
    start = clocks()
    for cls, name in (
        (preprocessors.CheckSubmission, "sanitize: check the folder"),
        (preprocessors.SandboxedExecute, "notebook run in the sandbox"),
        (preprocessors.GradeOutOfKernel, "graders + worker sandbox"),
    ):
        cls.preprocess = timed(name, cls.preprocess)
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_course(Path(tmp) / "course", COURSE_ROOT)
        register(ASSIGNMENT, root)
        nb = sample_notebooks(ASSIGNMENT, root)[args.kind]
        students = [f"p{i:02d}" for i in range(args.students)]
        for student in students:
            folder = root / "submitted" / student / ASSIGNMENT
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
        add_students(students, root)
        nb_api = timed("load nbgrader and the course's configuration", api)(root, in_process=True)
        for student in students:
            before = trace.sandboxes_closed()
            timed("autograde, all steps", autograde)(ASSIGNMENT, student, root, nb_api=nb_api)
            SANDBOXES.append(trace.sandboxes_closed() - before)
            timed("feedback HTML", generate_feedback)(ASSIGNMENT, student, root, nb_api=nb_api)
    wall, cpu = (b - a for a, b in zip(start, clocks(), strict=True))
    print(f"{args.students} submissions ({args.kind}) of {ASSIGNMENT}, graded one after another")
    print(f"{'step':<46} {'first':>14} {'each further (median)':>24}")
    for name, runs in STEPS.items():
        first = f"{runs[0][0]:5.2f} s {runs[0][1]:5.2f} cpu"
        rest = runs[1:] or runs
        later = (
            f"{statistics.median(r[0] for r in rest):5.2f} s "
            f"{statistics.median(r[1] for r in rest):5.2f} cpu"
        )
        print(f"{name:<46} {first:>14} {later:>24}")
    auto = STEPS["autograde, all steps"][1:] or STEPS["autograde, all steps"]
    inner = sum(
        statistics.median(r[1] for r in (STEPS[n][1:] or STEPS[n]))
        for n in STEPS
        if n.startswith(("sanitize", "notebook", "graders"))
    )
    rest = statistics.median(r[1] for r in auto) - inner
    print(f"{'nbgrader itself (reading, cells, gradebook)':<46} {'':>14} {rest:14.2f} cpu")
    mode = confined.probe().mode
    chain = "bwrap, setpriv, bwrap, python" if mode == "root" else "bwrap, python"
    print(
        f"sandboxes per submission: {statistics.median(SANDBOXES):g} (median; each starts "
        f"{chain}: {mode} mode)"
    )
    print(f"total: {wall:.1f} s, {cpu:.1f} CPU-seconds (CPU time from {CPU.source})")
    CPU.close()


if __name__ == "__main__":
    main()
