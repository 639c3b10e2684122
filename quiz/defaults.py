"""Every default of the quiz module, in one place."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
COURSE_ROOT = PACKAGE_DIR.parent

# Question banks: one YAML (or JSON) file per quiz, named after the quiz id.
BANK_DIR = PACKAGE_DIR / "banks"
BANK_SUFFIXES = (".yaml", ".yml", ".json")

# Per-student variants. A student's variant number is drawn from sha256(quiz id, student id);
# the numbers of variant v are drawn from sha256(quiz id, v, parameter name).
VARIANT_COUNT = 256

# Points of a question that does not say.
DEFAULT_POINTS = 1.0

# LMS exports: how many variants of each templated question go into a GIFT or QTI file
# (Moodle draws one per student from the question's category, Canvas from a question group).
EXPORT_FORMATS = ("gift", "qti", "jupyterquiz", "selfcheck", "widgets")
EXPORT_VARIANTS = 5
EXPORT_SUFFIX = {
    "gift": ".gift.txt",
    "qti": ".qti.zip",
    "jupyterquiz": ".jupyterquiz.json",
    "selfcheck": ".selfcheck.json",
    "widgets": ".selfcheck.ipynb",
}

# Self-check files: length in bytes of the random salt written into each file.
SALT_BYTES = 16
SELFCHECK_FORMAT_VERSION = 1


# Class grading.
GRADES_CSV = Path("grades.csv")
ITEM_ANALYSIS_TOP_WRONG = 3

# Graded delivery: the nbgrader assignment that holds the quizzes.
GRADED_ASSIGNMENT = "attention_quiz"
GRADED_QUIZZES = ("knowledge_check", "concept_check", "practice", "misconceptions")
GRADED_NOTEBOOK = COURSE_ROOT / "source" / GRADED_ASSIGNMENT / f"{GRADED_ASSIGNMENT}.ipynb"
GRADER_MARKER = "# quiz-grader:"
