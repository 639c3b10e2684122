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
    "by_function",
    "grade_cell_id",
    "graded_course",
]


def by_function(results: dict) -> dict[str, dict]:
    """Gradescope's results.json (`check --json`: one entry per grader test, tagged with its
    function) read per function: its score and most, its entries' outputs one after the
    other, then the notes the result's summary gives under it (a cell that raised), and
    "passed" only when every entry passed."""
    found: dict[str, dict] = {}
    notes: dict[str, list[str]] = {}
    current = None
    for line in results.get("output", "").splitlines():
        if line.startswith("  NOTE ") and current is not None:
            notes.setdefault(current, []).append(line.strip())
        else:
            current = line.split(": ", 1)[0] if line.endswith(" points") else None
    for test in results["tests"]:
        name = (test.get("tags") or [test["name"]])[0]
        mine = found.setdefault(
            name, {"name": name, "score": 0.0, "max_score": 0.0, "output": "", "status": "passed"}
        )
        mine["score"] += test["score"]
        mine["max_score"] += test["max_score"]
        mine["output"] += test["output"] + "\n"
        if test.get("status") == "failed":
            mine["status"] = "failed"
    for name, lines in notes.items():
        if name in found:
            found[name]["output"] += "\n".join(lines) + "\n"
    return found
