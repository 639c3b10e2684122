"""The course's assignments and their graded functions: the one place these names live."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from quiz.defaults import GRADED_ASSIGNMENT as QUIZ_ASSIGNMENT

COURSE_ROOT = Path(__file__).resolve().parent.parent
GRADER_DIR = COURSE_ROOT / "grader_tests"
REFERENCE_FILE = GRADER_DIR / "reference.py"  # the reference implementation, never released


@dataclass(frozen=True)
class Assignment:
    name: str
    graded: tuple[str, ...]  # graded functions, in notebook order
    helpers: tuple[str, ...] = ()  # functions the student brings from an earlier assignment

    def grader_file(self, function: str) -> Path:
        return GRADER_DIR / f"test_{function}.py"

    def grader_files(self) -> list[Path]:
        return [self.grader_file(f) for f in self.graded]


ASSIGNMENTS: dict[str, Assignment] = {
    a.name: a
    for a in (
        Assignment(
            "attention_basics",
            ("softmax", "create_qkv", "causal_mask", "scaled_dot_product_attention"),
        ),
        Assignment(
            "masks_and_heads",
            (
                "self_attention",
                "cross_attention",
                "split_heads",
                "combine_heads",
                "multi_head_attention",
                "attention_cost",
            ),
            helpers=("softmax", "scaled_dot_product_attention", "causal_mask"),
        ),
    )
}

# The graded quiz (quiz/): an nbgrader assignment too, graded with the banks' key.
ALL_ASSIGNMENTS: tuple[str, ...] = (*ASSIGNMENTS, QUIZ_ASSIGNMENT)

# Cell ids: the solution cell of function f is "f", its locked test cell is "f_tests",
# the locked set-up cell that the grading worker also runs is "imports".
SETUP_CELL_ID = "imports"


def graded_course(working_folder: Path) -> list[Path]:
    """The course a kernel or grader works for, from its working folder
    <root>/autograded/<student>/<assignment>/ (empty when it is not such a folder)."""
    folder = working_folder.resolve()
    return [p for p in folder.parents[2:3] if (p / "nbgrader_config.py").exists()]


def grade_cell_id(function: str) -> str:
    return f"{function}_tests"


def get_assignment(name: str) -> Assignment:
    try:
        return ASSIGNMENTS[name]
    except KeyError:
        known = ", ".join(ASSIGNMENTS)
        raise KeyError(f"unknown assignment {name!r} (known: {known})") from None
