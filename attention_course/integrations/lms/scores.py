"""Each student's grade of an assignment as the LMS should get it: the number every other place
gives (nbgrader's, its late penalty taken off once: `max(0, score - penalty)`, as nbgrader's
export and feedback give it), or no number at all where there is none yet.

A submission's state, read from the gradebook (nbgrader's tables and the class run's record of
each submission's last grading, classgrade/gradebook.py) and the course's submitted/ folder:

- GRADED: the class run graded this very submission (its record says graded, with nbgrader's
  total, and nbgrader's submission time is the submitted folder's): a score;
- NOT_GRADED: the class run recorded the student's own reason (a notebook that is not valid
  JSON, a refused folder): 0, fully graded, as the course's other tables count it;
- PENDING: anything else with a submission: not graded yet, changed since it was graded, or a
  fault of grading (never recorded, graded again by the next run): no number, never a 0;
- PENDING_MANUAL: graded, but nbgrader says cells wait for a person.

Students with no submission get nothing (the LMS's own missing-work policy applies).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from attention_course.classgrade import gradebook as class_records
from attention_course.classgrade import outcomes
from attention_course.classgrade.nbgrader_api import (
    gradebook_exists,
    gradebook_settings,
    submitted_students,
)
from attention_course.errors import UserError

GRADED, NOT_GRADED, PENDING, PENDING_MANUAL = "graded", "not graded", "pending", "pending manual"
SCORE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class LmsGrade:
    """One student's grade of one assignment, for the LMS."""

    student: str
    state: str  # GRADED, NOT_GRADED, PENDING or PENDING_MANUAL
    score: float | None  # what the LMS gets: after the late penalty; None: no number yet
    raw: float | None = None  # nbgrader's score before the penalty
    penalty: float = 0.0  # nbgrader's late penalty
    submitted_at: datetime | None = None  # when the student submitted (UTC)
    reason: str = ""  # why: a student's reason, or what is pending

    @property
    def late(self) -> bool:
        return self.penalty > 0


@dataclass(frozen=True)
class AssignmentGrades:
    assignment: str
    maximum: float  # nbgrader's maximum score of the assignment
    grades: tuple[LmsGrade, ...]


def _folder_time(root: Path, student: str, assignment: str) -> datetime | None:
    """The submission's time as nbgrader reads it (submitted/S/A/timestamp.txt), naive UTC."""
    from nbgrader.utils import parse_utc

    path = root / "submitted" / student / assignment / "timestamp.txt"
    try:
        return parse_utc(path.read_text().strip())
    except (OSError, ValueError, TypeError):
        return None


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.replace(tzinfo=UTC)


def assignment_grades(assignment: str, root: Path) -> AssignmentGrades:
    """Every submitted student's grade of `assignment` (UserError when the gradebook does not
    know it yet)."""
    from nbgrader.api import Gradebook, MissingEntry

    url, course_id = gradebook_settings(root)
    if not gradebook_exists(root):
        raise UserError(f"no gradebook yet: autograde {assignment} first")
    records = class_records.Records(url, course_id, assignment)
    try:
        recorded = records.all()
    finally:
        records.close()
    found: list[LmsGrade] = []
    with Gradebook(url, course_id) as gb:
        try:
            maximum = float(gb.find_assignment(assignment).max_score)
        except MissingEntry:
            raise UserError(
                f"{assignment}: not in the gradebook yet (autograde it first)"
            ) from None
        rows = {s.student_id: s for s in gb.assignment_submissions(assignment)}
        students = sorted(set(rows) | set(submitted_students(assignment, root)))
        for student in students:
            found.append(
                _grade(student, rows.get(student), recorded.get(student, {}), root, assignment)
            )
    return AssignmentGrades(assignment, maximum, tuple(found))


def _grade(student: str, row, record: dict, root: Path, assignment: str) -> LmsGrade:
    folder_time = _folder_time(root, student, assignment)
    graded_time = None if row is None else row.timestamp
    submitted = _utc(folder_time or graded_time)
    status = record.get("status")
    if status == "not graded":
        return LmsGrade(student, NOT_GRADED, 0.0, 0.0, 0.0, submitted, record.get("reason", ""))
    if status == outcomes.FAILED:  # a fault of grading: tried again by the next run
        why = f"its grading failed ({record.get('reason') or 'no reason given'})"
        return LmsGrade(student, PENDING, None, submitted_at=submitted, reason=why)
    if status == outcomes.GRADING_NOW:
        why = "being graded, or its grading did not finish"
        return LmsGrade(student, PENDING, None, submitted_at=submitted, reason=why)
    if row is None or status != "graded":
        return LmsGrade(student, PENDING, None, submitted_at=submitted, reason="not graded yet")
    raw, penalty = float(row.score), float(row.late_submission_penalty or 0.0)
    if folder_time is not None and folder_time != graded_time:
        return LmsGrade(student, PENDING, None, submitted_at=submitted, reason="submitted again")
    total = record.get("total")
    if total is None or abs(float(total) - raw) > SCORE_TOLERANCE:
        why = "the gradebook's score is not the one its grading recorded"
        return LmsGrade(student, PENDING, None, submitted_at=submitted, reason=why)
    score = max(0.0, raw - penalty)  # nbgrader's own rule (its export, its feedback)
    if row.needs_manual_grade:
        why = "cells wait for manual grading"
        return LmsGrade(student, PENDING_MANUAL, None, raw, penalty, submitted, why)
    return LmsGrade(student, GRADED, score, raw, penalty, submitted)
