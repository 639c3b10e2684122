"""A busy machine changes no result: honest submissions graded beside more CPU hogs than the
machine has cores get exactly what they get on a quiet machine, test by test."""

from __future__ import annotations

import nbformat
import pytest

from attention_course.cli.samples import sample_notebooks
from attention_course.grading.graders import GradeReport, grade_file
from tests.course import COURSE, COURSE_ROOT
from tests.hogs import cpu_hogs

ASSIGNMENT = "attention_basics"
STUDENTS = ("demo-instructor", "demo-partial")  # full marks, and some tests failed


def _results(report: GradeReport) -> dict:
    return {
        "tests": {
            (f.function, t.test): (t.passed, t.message)
            for f in report.functions.values()
            for t in f.tests
        },
        "cell_errors": report.cell_errors,
        "notes": report.notes,
    }


@pytest.mark.alone
def test_honest_submissions_beside_cpu_hogs_get_their_quiet_results(tmp_path):
    notebooks = sample_notebooks(ASSIGNMENT, COURSE_ROOT)
    paths = {}
    for student in STUDENTS:
        paths[student] = tmp_path / student / f"{ASSIGNMENT}.ipynb"
        paths[student].parent.mkdir()
        nbformat.write(notebooks[student], paths[student])

    def grade_all() -> dict:
        return {
            s: _results(grade_file(p, ASSIGNMENT, in_process=True, course=COURSE))
            for s, p in paths.items()
        }

    quiet = grade_all()
    with cpu_hogs():
        busy = grade_all()
    assert busy == quiet
    passed = [ok for r in quiet.values() for ok, _ in r["tests"].values()]
    assert any(passed) and not all(passed)  # both kinds of result are compared
