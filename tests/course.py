"""This repository's course, as the tests use it: read from its course.toml like any course."""

from __future__ import annotations

from pathlib import Path

from attention_course.cli.samples import hostile_cells, partial_cells, partial_unaffected
from attention_course.course import SETUP_CELL_ID, Course, grade_cell_id, graded_course

COURSE_ROOT = Path(__file__).resolve().parent.parent
COURSE = Course.load(COURSE_ROOT)
GRADER_DIR = COURSE.grader_dir
REFERENCE_FILE = COURSE.reference_file
ASSIGNMENTS = COURSE.assignments
ALL_ASSIGNMENTS = COURSE.all_assignments
assert COURSE.quiz is not None
QUIZ_ASSIGNMENT = COURSE.quiz.assignment
GRADED_QUIZZES = COURSE.quiz.quizzes
BANK_DIR = COURSE.quiz.banks
FORMULAS_FILE = COURSE.quiz.formulas
GRADED_NOTEBOOK = COURSE.source_notebook(QUIZ_ASSIGNMENT)


# The demo class's sample students, from the course's samples/ folder.
PARTIAL = {a: partial_cells(COURSE_ROOT, a) for a in ASSIGNMENTS}
PARTIAL_UNAFFECTED = {a: partial_unaffected(COURSE_ROOT, a) for a in ASSIGNMENTS}
HOSTILE = hostile_cells(COURSE_ROOT)


__all__ = [
    "ALL_ASSIGNMENTS",
    "ASSIGNMENTS",
    "BANK_DIR",
    "COURSE",
    "COURSE_ROOT",
    "FORMULAS_FILE",
    "GRADED_NOTEBOOK",
    "GRADED_QUIZZES",
    "GRADER_DIR",
    "HOSTILE",
    "PARTIAL",
    "PARTIAL_UNAFFECTED",
    "QUIZ_ASSIGNMENT",
    "REFERENCE_FILE",
    "SETUP_CELL_ID",
    "grade_cell_id",
    "graded_course",
]
