"""Reading a submitted notebook's code without running it (grading/notebook.py, and the
metadata restored from it, grading/submissions.py): a cell Python's parser cannot take, too deep
for it (RecursionError, MemoryError), defines nothing and crashes nothing."""

from __future__ import annotations

import warnings
from pathlib import Path

import nbformat
import pytest

from attention_course.grading.notebook import detect_assignment, parse_source, program_cells
from attention_course.grading.submissions import restore_metadata
from tests.course import COURSE, COURSE_ROOT

TOO_DEEP = ["x = " + "1+" * 3000 + "1", "y = " + "-" * 5000 + "1", "z = " + "a." * 4000 + "a"]
SOFTMAX = "def softmax(z, axis=-1):\n    return z\n"


@pytest.mark.parametrize("source", TOO_DEEP)
def test_source_too_deep_to_parse_is_a_syntax_error(source):
    with pytest.raises(SyntaxError, match="nested too deeply"):
        parse_source(source)


def test_the_parsers_warnings_about_student_code_are_not_shown():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        parse_source("x = 1if 1 else 2")  # SyntaxWarning: invalid decimal literal
    assert shown == []


def test_a_notebook_with_cells_too_deep_to_parse_is_still_read():
    """No nbgrader metadata: the program is the cells that define functions, the assignment is
    found by the functions defined, and the released notebook's metadata is restored."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(s) for s in [*TOO_DEEP, SOFTMAX]]
    )
    assert program_cells(nb) == [("cell3", SOFTMAX)]
    assert detect_assignment(nb, Path("homework.ipynb"), COURSE) == "attention_basics"
    released = COURSE_ROOT / "release" / "attention_basics" / "attention_basics.ipynb"
    rebuilt, missing = restore_metadata(nb, nbformat.read(released, 4))
    assert "softmax" not in missing and "causal_mask" in missing
    assert any(c.source == SOFTMAX for c in rebuilt.cells)
