"""What a student reads of a grade: the PASS/FAIL lines of a function's grader tests, and the
cell's share of points (no nbgrader here: `check` and Gradescope use it too).

Where this stands on a submission's way (docs/life-of-a-submission.md): after grade_file,
GradeOutOfKernel writes each grade cell's PASS/FAIL lines and score from here, which nbgrader's
SaveAutoGrades stores in the gradebook; the Check service, `check` and the Gradescope runner
show the same lines.
"""

from __future__ import annotations

from collections.abc import Sequence

import attention_course
from attention_course.course import SETUP_CELL_ID
from attention_course.grading.graders import GradeReport

UNSANDBOXED_NOTE = "UNSANDBOXED: graded without the sandbox, as the instructor asked"
# Key of the grade cell's score output metadata that holds the grader tests behind the score
# (test, description, points, passed, message each), for class reports.
RECORD_KEY = "attention_course"


def cell_feedback(report: GradeReport, function: str, extra: Sequence[str] = ()) -> str:
    lines = [
        f"{function}: {report.functions[function].score:g} / "
        f"{report.functions[function].max_score:g} points (graded outside your kernel)"
    ]
    lines.append(report.functions[function].feedback())
    for err in report.cell_errors:
        if err["cell_id"] in (function, SETUP_CELL_ID):
            lines.append(
                f"NOTE the cell {err['cell_id']!r} raised {err['error_type']}: "
                f"{err['error_message']}"
            )
    if report.unsandboxed:
        lines.append(f"NOTE {UNSANDBOXED_NOTE}")
    lines += [f"NOTE {line}" for line in extra]
    lines.append(graded_by())
    return "\n".join(lines) + "\n"


def graded_by() -> str:
    """The line that says which engine graded: the version a CHANGELOG entry names."""
    return f"(graded by attention-course {attention_course.__version__})"


def cell_score(points: float, report: GradeReport, function: str) -> float:
    """The cell's points in proportion to the points of the grader's tests passed."""
    f = report.functions[function]
    return round(points * f.score / f.max_score, 6) if f.max_score else 0.0
