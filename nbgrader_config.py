"""nbgrader configuration of the attention course (nbgrader 0.9)."""

from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

from attention_course.preprocessors import GradeOutOfKernel, SafeExecute

ROOT = Path(__file__).resolve().parent

c = get_config()  # noqa: F821 (provided by nbgrader)

c.CourseDirectory.root = str(ROOT)
c.CourseDirectory.course_id = "attention-course"
c.CourseDirectory.db_url = f"sqlite:///{ROOT / 'gradebook.db'}"

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A deleted test cell is restored and graded, not left for manual grading.
c.OverwriteCells.add_missing_cells = True

# Student code in the kernel gets a time limit per cell; graded functions are called in a
# separate, sandboxed worker by GradeOutOfKernel (see attention_course/sandbox.py).
c.Execute.timeout = 60
c.Autograde.autograde_preprocessors = [
    SafeExecute,
    GradeOutOfKernel,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]

# Feedback never shows the hidden part of a test cell.
c.GenerateFeedback.preprocessors = [
    GetGrades,
    CSSHTMLHeaderPreprocessor,
    ClearHiddenTests,
]
