"""How fast grading is: prints figures, asserts nothing.

    python benchmarks/grading_speed.py [--students N]

1. `check` on one notebook (a pytest process + one sandboxed worker), per assignment.
2. Many notebooks through `grade_many`, one job versus one job per core.
3. `nbgrader autograde` per submission (kernel run + out-of-kernel grading) in a course copy.
4. `autograde_class` on a batch, one job versus one per core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_course.assignments import ASSIGNMENTS  # noqa: E402
from attention_course.classgrade import autograde_class  # noqa: E402
from attention_course.course import autograde, release  # noqa: E402
from attention_course.grading import grade_file, grade_many  # noqa: E402
from attention_course.samples import sample_notebooks  # noqa: E402
from tests.conftest import copy_course  # noqa: E402


def timed(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=6, help="notebooks per batch")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        root = copy_course(tmp / "course")
        release(root=root)
        print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
        print("\n1. check on one notebook (median of 3)")
        paths = {}
        for assignment in ASSIGNMENTS:
            nb = sample_notebooks(assignment, root)["demo-instructor"]
            path = tmp / f"{assignment}.ipynb"
            nbformat.write(nb, path)
            paths[assignment] = path
            seconds = timed(lambda a=assignment, p=path: grade_file(p, a))
            print(f"   {assignment:<18} {seconds:6.2f} s")

        print(f"\n2. grade_many on {args.students} notebooks of attention_basics")
        batch = [paths["attention_basics"]] * args.students
        for jobs in (1, os.cpu_count() or 1):
            start = time.perf_counter()
            grade_many(batch, "attention_basics", jobs=jobs)
            seconds = time.perf_counter() - start
            print(f"   jobs={jobs}: {seconds:6.2f} s total, {seconds / len(batch):5.2f} s each")

        print("\n3. nbgrader autograde, instructor solution (kernel run + grading)")
        for assignment in ASSIGNMENTS:
            nb = sample_notebooks(assignment, root)["demo-instructor"]
            times = []
            for i in range(3):
                student = f"bench-{i}"
                folder = root / "submitted" / student / assignment
                folder.mkdir(parents=True)
                nbformat.write(nb, folder / f"{assignment}.ipynb")
                start = time.perf_counter()
                result = autograde(assignment, student, root)
                times.append(time.perf_counter() - start)
                assert result["success"], result.get("log", "")[-2000:]
            print(f"   {assignment:<18} {statistics.median(times):6.2f} s per submission")

        print(f"\n4. autograde_class: {args.students} submissions of attention_basics")
        nb = sample_notebooks("attention_basics", root)["demo-instructor"]
        for jobs in (1, os.cpu_count() or 1):
            students = [f"many-{jobs}-{i}" for i in range(args.students)]
            for student in students:
                folder = root / "submitted" / student / "attention_basics"
                folder.mkdir(parents=True)
                nbformat.write(nb, folder / "attention_basics.ipynb")
            start = time.perf_counter()
            run = autograde_class("attention_basics", root, students, jobs=jobs, feedback=False)
            seconds = time.perf_counter() - start
            assert all(o.status == "graded" for o in run.outcomes.values())
            print(f"   jobs={jobs}: {seconds:6.2f} s total, {seconds / len(students):5.2f} s each")


if __name__ == "__main__":
    main()
