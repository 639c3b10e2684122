"""How fast and how large grading a class is: prints figures, asserts nothing.

    python benchmarks/class_grading.py [--students N] [--jobs 1 2]

A class of N submissions of attention_basics (a third the instructor's solution, a third partly
wrong, a third untouched stubs) is autograded with nbgrader into a fresh course copy, once per
job count. For each run it prints the wall time, submissions per minute, the CPU-seconds per
submission (this process and every process it started), and the peak resident memory of the
largest single grading process.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grading_speed import write_class  # noqa: E402

from attention_course.classgrade.nbgrader_api import (
    copy_course,  # noqa: E402
    release,  # noqa: E402
)
from attention_course.classgrade.run import autograde_class  # noqa: E402

COURSE_ROOT = Path(__file__).resolve().parent.parent  # this repository's course

ASSIGNMENT = "attention_basics"


def cpu_seconds() -> float:
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=24, help="submissions in the class")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="job counts to run")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"class: {args.students} submissions of {ASSIGNMENT} (correct, partly wrong, stubs)")
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in args.jobs:
            root = copy_course(Path(tmp) / f"course-{jobs}", COURSE_ROOT)
            release(root=root)
            students = write_class(root, ASSIGNMENT, args.students)
            cpu = cpu_seconds()
            start = time.perf_counter()
            run = autograde_class(ASSIGNMENT, root, jobs=jobs, feedback=False)
            wall = time.perf_counter() - start
            cpu = cpu_seconds() - cpu
            failed = [s for s, o in run.outcomes.items() if o.status != "graded"]
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print(
                f"jobs={jobs}: {wall:6.1f} s, {60 * len(students) / wall:5.1f} per minute, "
                f"{cpu / len(students):4.2f} CPU-s per submission, "
                f"peak process {peak:5.0f} MB" + (f", FAILED: {failed}" if failed else "")
            )


if __name__ == "__main__":
    main()
