"""How much slower grading is on a busy machine, and whether any result changed: prints figures.

    python benchmarks/busy_machine.py [--hogs 6 16] [--students demo-instructor demo-partial]

Honest submissions (the demo's sample students of every assignment but the quiz) are graded
as `check` grades them (graders in this process, student code in the sandbox), first on a quiet
machine, then beside each number of CPU hogs (`while 1: pass` processes; default: twice the
cores and two more). For each run it prints the wall time and the CPU-seconds of grading (this
process and its sandboxes, not the hogs), how much slower it was than quiet, and whether every
test's result and message is the quiet one.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import nbformat  # noqa: E402
from cputime import CpuClock  # noqa: E402

from attention_course.cli.samples import sample_notebooks  # noqa: E402
from attention_course.course import Course  # noqa: E402
from attention_course.grading.graders import grade_file  # noqa: E402
from tests.hogs import cpu_hogs, hog_count  # noqa: E402

COURSE_ROOT = Path(__file__).resolve().parent.parent  # this repository's course


def grade_all(course: Course, paths: dict[tuple[str, str], Path]) -> dict:
    """(assignment, student) -> every test's (passed, message), cell errors and notes."""
    found = {}
    for (assignment, student), path in paths.items():
        report = grade_file(path, assignment, in_process=True, course=course)
        found[assignment, student] = (
            {
                (f.function, t.test): (t.passed, t.message)
                for f in report.functions.values()
                for t in f.tests
            },
            report.cell_errors,
            report.notes,
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hogs", type=int, nargs="+", default=[hog_count()], help="CPU hogs")
    parser.add_argument(
        "--students", nargs="+", default=["demo-instructor", "demo-partial", "demo-stub"]
    )
    args = parser.parse_args()
    if any(n < 1 for n in args.hogs):
        parser.error("--hogs: each count must be at least 1")
    course = Course.load(COURSE_ROOT)
    assignments = [a for a in course.all_assignments if a != course.quiz_assignment]
    clock = CpuClock()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"CPU time from {clock.source}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            paths = {}
            for assignment in assignments:
                notebooks = sample_notebooks(assignment, COURSE_ROOT)
                for student in args.students:
                    path = Path(tmp) / assignment / student / f"{assignment}.ipynb"
                    path.parent.mkdir(parents=True)
                    nbformat.write(notebooks[student], path)
                    paths[assignment, student] = path
            print(f"submissions: {len(paths)} ({', '.join(args.students)} of {len(assignments)})")

            def measured(hogs: int) -> tuple[float, float, dict]:
                cpu, start = clock.seconds(), time.perf_counter()
                results = grade_all(course, paths)
                return time.perf_counter() - start, clock.seconds() - cpu, results

            grade_all(course, dict(list(paths.items())[:1]))  # imports and caches, not measured
            quiet_wall, quiet_cpu, quiet = measured(0)
            print(f"quiet:   {quiet_wall:6.1f} s wall, {quiet_cpu:6.1f} CPU-s")
            for count in args.hogs:
                with cpu_hogs(count) as hogs:
                    clock.release([h.pid for h in hogs])  # their CPU time is not grading's
                    wall, cpu, busy = measured(count)
                changed = [k for k in quiet if busy[k] != quiet[k]]
                print(
                    f"{count:2d} hogs: {wall:6.1f} s wall ({wall / quiet_wall:4.1f}x), "
                    f"{cpu:6.1f} CPU-s ({cpu / quiet_cpu:4.2f}x); "
                    + (f"CHANGED: {changed}" if changed else "every result as quiet")
                )
    finally:
        clock.close()


if __name__ == "__main__":
    main()
