"""The graders without pytest (what grading jobs and `check` run) report exactly what
`pytest grader_tests` reports: on the sample class, and on wrong implementations of the
catalogue, pasted helpers and graded callees included."""

from __future__ import annotations

import nbformat
import pytest

from attention_course.cli.samples import sample_notebooks
from attention_course.grading.graders import grade_file
from tests.course import ASSIGNMENTS, COURSE_ROOT, REFERENCE_FILE
from tests.grading.test_catalogue import ASSIGNMENT_OF, ENTRIES


def _same(path, assignment, functions=None):
    with_pytest = grade_file(path, assignment, functions=functions, in_process=False)
    without = grade_file(path, assignment, functions=functions)
    assert without.functions == with_pytest.functions
    assert without.cell_errors == with_pytest.cell_errors
    assert without.notes == with_pytest.notes
    assert without.seed == with_pytest.seed is not None  # handed to pytest in a file


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
@pytest.mark.parametrize(
    "student",
    [
        "demo-instructor",
        "demo-partial",
        "demo-stub",
        # endless loops to every limit, in both paths: minutes (scripts/test.sh --long; the
        # hostile student's grading is in tests/sandbox/test_hostile.py and classgrade/)
        pytest.param("demo-hostile", marks=pytest.mark.long),
    ],
)
def test_sample_class(tmp_path, assignment, student):
    path = tmp_path / f"{assignment}.ipynb"
    nbformat.write(sample_notebooks(assignment, COURSE_ROOT)[student], path)
    _same(path, assignment)


# every thirty-sixth entry (the two paths share the graders and the sandbox; they differ in how a
# report is gathered), and one whose correct caller keeps its points (a graded callee's bug)
SAMPLE = list({e.key: e for e in [*ENTRIES[::36], *[e for e in ENTRIES if e.callers][:1]]}.values())


@pytest.mark.parametrize("entry", SAMPLE, ids=lambda e: e.key)
def test_catalogue_entries(tmp_path, entry):
    path = tmp_path / f"{entry.path.stem}.py"
    path.write_text(REFERENCE_FILE.read_text() + "\n\n" + entry.path.read_text())
    _same(path, ASSIGNMENT_OF[entry.function], entry.functions)
