"""The class report: which ideas the class got wrong, from the gradebook (nothing is regraded).

Scores come from the gradebook. Which grader tests each student passed comes from the score
outputs of the autograded notebooks, where grading recorded them (`preprocessors.RECORD_KEY`);
a record that does not add up to the gradebook's score (a manual grade, a stale notebook) is left
out and named. For the graded quiz, the rows are its questions and the quiz's item analysis
(`attention_course.quiz.grading`) joins the report.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from attention_course.course import Course, grade_cell_id
from attention_course.grading.diagnosis import LEAD
from attention_course.grading.feedback import RECORD_KEY
from attention_course.grading.harness import NOT_IMPLEMENTED

# what a function left as the stub says (and said, in the records of earlier engines)
NOT_ATTEMPTED = (NOT_IMPLEMENTED, "raised NotImplementedError")


BINS = 10  # histogram bins over 0-100 % of the assignment's points (files and figure)


class ReportError(ValueError):
    """The report cannot be made (no course, no gradebook, nothing graded); one line."""


# --------------------------------------------------------------------------- reading


@dataclass
class Cell:
    """One grade cell of one submission, as the gradebook holds it."""

    score: float
    max_score: float
    auto_score: float | None
    manual_score: float | None
    needs_manual_grade: bool


@dataclass
class Submission:
    student: str
    total: float
    cells: dict[str, Cell]
    records: dict[str, dict]  # grade cell id -> what grading recorded in the autograded notebook
    autograded: bool  # graded, by this course folder or another on the same gradebook
    here: bool = True  # its autograded notebook is in this course folder (its tests' records)
    late_penalty: float = 0.0  # nbgrader's late penalty, already taken off `total`
    unreliable: str = ""  # why its scores are not reliable (its grading failed or is not done)


def _gradebook(root: Path):
    from attention_course.classgrade.nbgrader_api import CourseError, _config, _gradebook

    try:
        url = _config(root).CourseDirectory.db_url
    except CourseError as exc:
        raise ReportError(str(exc)) from None
    if url.startswith("sqlite:///"):  # opening a missing SQLite gradebook would create it
        path = Path(url.removeprefix("sqlite:///").split("?")[0])
        if not path.exists():
            raise ReportError(f"no gradebook at {path} (autograde the assignment first)")
    return _gradebook(root)


def _records(path: Path) -> dict[str, dict]:
    """grade cell id -> the record in its score output, for one autograded notebook (an id on
    more than one cell is ignored)."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = [c for c in nb["cells"] if isinstance(c, dict)]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    found: dict[str, dict] = {}
    seen: Counter = Counter()
    for cell in cells:
        meta = cell.get("metadata")
        meta = meta.get("nbgrader") if isinstance(meta, dict) else None
        if not (isinstance(meta, dict) and meta.get("grade") and meta.get("grade_id")):
            continue
        seen[str(meta["grade_id"])] += 1
        for out in cell.get("outputs") or []:
            if not isinstance(out, dict) or out.get("output_type") != "execute_result":
                continue
            record = out.get("metadata", {}).get(RECORD_KEY)
            if isinstance(record, dict):
                found[str(meta["grade_id"])] = record
    return {cid: record for cid, record in found.items() if seen[cid] == 1}


def _recorded_in_the_gradebook(assignment: str, root: Path) -> dict[str, dict]:
    """What the gradebook records of each student's last grading (classgrade.jobs.State):
    graded by this course folder or by another on the same gradebook, not graded, or marked
    as not reliable (outcomes.UNRELIABLE)."""
    from attention_course.classgrade.gradebook import Records
    from attention_course.classgrade.nbgrader_api import gradebook_settings

    records = Records(*gradebook_settings(root), assignment)
    try:
        return records.all()
    finally:
        records.close()


def _unreliable(record: dict) -> str:
    """Why a submission's scores are not reliable, from its record ("" if they are)."""
    from attention_course.classgrade.outcomes import FAILED, UNRELIABLE

    if record.get("status") not in UNRELIABLE:
        return ""
    if record.get("status") == FAILED:
        return f"grading failed: {record.get('reason') or 'no reason given'}"
    return "being graded, or its grading did not finish"


def read_class(assignment: str, root: Path) -> list[Submission]:
    """Every submission of `assignment` in the course's gradebook, with its recorded tests."""
    from nbgrader.api import MissingEntry

    subs = []
    with _gradebook(root) as gb:
        try:
            found = gb.assignment_submissions(assignment)
        except MissingEntry:
            return []
        recorded = _recorded_in_the_gradebook(assignment, root)
        elsewhere = {s for s, r in recorded.items() if r.get("status") == "graded"}
        for sub in found:
            if not sub.notebooks:  # an extension given before anything was handed in
                continue
            cells, records, autograded = {}, {}, False
            for nb in sub.notebooks:
                for g in nb.grades:
                    cells[g.name] = Cell(
                        float(g.score),
                        float(g.max_score),
                        g.auto_score,
                        g.manual_score,
                        bool(g.needs_manual_grade),
                    )
                path = root / "autograded" / sub.student_id / assignment / f"{nb.name}.ipynb"
                autograded = autograded or path.exists()
                records.update(_records(path))
            here = autograded
            autograded = autograded or sub.student_id in elsewhere
            penalty = float(sub.late_submission_penalty or 0.0)
            total = max(0.0, float(sub.score) - penalty)  # the grade, as nbgrader exports it
            subs.append(
                Submission(sub.student_id, total, cells, records, autograded, here, penalty)
            )
            subs[-1].unreliable = _unreliable(recorded.get(sub.student_id, {}))
    return sorted(subs, key=lambda s: s.student)


# --------------------------------------------------------------------------- statistics


@dataclass
class GroupStats:
    """Scores of one graded function (or one quiz) across the class."""

    name: str
    points: float
    scores: list[float]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores) if self.scores else 0.0

    @property
    def sd(self) -> float:
        return statistics.pstdev(self.scores) if self.scores else 0.0

    @property
    def full_marks(self) -> int:
        return sum(s >= self.points for s in self.scores)


@dataclass
class ItemStats:
    """One grader test (or quiz question) across the class."""

    group: str  # the function, or the quiz
    item: str  # the grader test, or the question id
    description: str
    points: float
    graded: int = 0  # students whose result is known
    passed: int = 0
    not_attempted: int = 0  # failed because the function was left as the stub / no answer
    pending: int = 0  # answers still to be graded by hand (not counted in `graded`)
    hints: Counter = field(default_factory=Counter)  # what the failures said -> students

    @property
    def failed(self) -> int:
        return self.graded - self.passed

    @property
    def pass_rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0


@dataclass
class ClassReport:
    assignment: str
    group_label: str  # "function" or "quiz"
    item_label: str  # "grader test" or "question"
    max_score: float
    totals: dict[str, float]  # student -> the grade: gradebook total less its late penalty
    groups: list[GroupStats]
    items: list[ItemStats]  # most failed first
    notes: list[str]
    not_autograded: list[str]
    item_analysis: str = ""  # the quiz's item analysis
    # student -> why its scores are not reliable: left out of every figure
    unreliable: dict[str, str] = field(default_factory=dict)
    late: dict[str, float] = field(default_factory=dict)  # student -> late penalty taken off

    @property
    def mean(self) -> float:
        return statistics.fmean(self.totals.values()) if self.totals else 0.0

    @property
    def sd(self) -> float:
        return statistics.pstdev(self.totals.values()) if self.totals else 0.0


def _most_failed_first(items: list[ItemStats]) -> list[ItemStats]:
    order = {id(item): i for i, item in enumerate(items)}
    return sorted(items, key=lambda t: (not t.graded, t.pass_rate, -t.points, order[id(t)]))


TEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "test": str,
    "description": str,
    "points": (int, float),
    "passed": bool,
    "message": str,
}


def _readable(tests: object) -> TypeGuard[list[dict[str, Any]]]:
    """A record's tests: a non-empty list of {test, description, points, passed, message}."""
    return (
        isinstance(tests, list)
        and bool(tests)
        and all(
            isinstance(t, dict)
            and all(isinstance(t.get(k), kind) for k, kind in TEST_FIELDS.items())
            for t in tests
        )
    )


def _consistent(record_tests: list[dict[str, Any]], cell: Cell) -> bool:
    """Do the recorded tests give the score the gradebook holds (as cell_score computes it)?"""
    total = sum(float(t["points"]) for t in record_tests)
    got = sum(float(t["points"]) for t in record_tests if t["passed"])
    expected = round(cell.max_score * got / total, 6) if total else 0.0
    return cell.manual_score is None and abs(expected - cell.score) < 1e-6


def _hint(test: dict[str, Any]) -> str:
    """What a failure told its student, the same for every student it told it to: the mistake
    named ("It looks as if ..."), else the property's line; never the student's own input."""
    lines = str(test["message"]).splitlines()
    named = next((line for line in lines if line.startswith(LEAD)), None)
    return named or (lines[0] if lines else "") or "(no message)"


def function_report(course: Course, assignment: str, subs: list[Submission]) -> ClassReport:
    """A code assignment: one group per graded function, one item per grader test."""
    functions = course.assignment(assignment).graded
    items: dict[tuple[str, str], ItemStats] = {}
    groups, notes = [], []
    away = sorted(s.student for s in subs if s.autograded and not s.here)
    if away:
        notes.append(
            f"{', '.join(away)}: graded by another course folder on this gradebook; their "
            "grader tests are recorded in its autograded/ (left out of the pass rates here)"
        )
    for function in functions:
        cid = grade_cell_id(function)
        points = next((s.cells[cid].max_score for s in subs if cid in s.cells), 0.0)
        groups.append(
            GroupStats(function, points, [s.cells[cid].score for s in subs if cid in s.cells])
        )
        for sub in subs:
            tests = sub.records.get(cid, {}).get("tests")
            if not sub.here or cid not in sub.cells:
                continue
            if not _readable(tests):
                notes.append(f"{sub.student}: no recorded tests for {function} (autograde again)")
                continue
            if not _consistent(tests, sub.cells[cid]):
                notes.append(
                    f"{sub.student}: {function}'s recorded tests do not add up to the gradebook's "
                    f"{sub.cells[cid].score:g} (a manual grade, or an older autograde): left out"
                )
                continue
            scored = [t for t in tests if t["points"]]  # (0-point lines pass for a stub too)
            skipped = all(
                any(words in str(t["message"]) for words in NOT_ATTEMPTED)
                for t in scored
                if not t["passed"]
            )
            skipped = skipped and not any(t["passed"] for t in scored)
            for t in tests:
                key = (function, str(t["test"]))
                if key not in items:
                    items[key] = ItemStats(
                        function, key[1], str(t["description"]), float(t["points"])
                    )
                stats = items[key]
                stats.graded += 1
                if t["passed"]:
                    stats.passed += 1
                elif skipped:
                    stats.not_attempted += 1
                else:
                    stats.hints[_hint(t)] += 1
    return ClassReport(
        assignment,
        "function",
        "grader test",
        sum(g.points for g in groups),
        {s.student: s.total for s in subs},
        groups,
        _most_failed_first(list(items.values())),
        notes,
        [s.student for s in subs if not s.autograded],
    )


def quiz_report(course: Course, assignment: str, subs: list[Submission]) -> ClassReport:
    """The graded quiz: one group per quiz, one item per question, and the item analysis."""
    from attention_course.quiz.checking import Result
    from attention_course.quiz.grading import Graded, format_item_analysis, item_analysis
    from attention_course.quiz.loading import load_bank
    from attention_course.quiz.notebooks import grade_cell_id as quiz_cell_id

    cells = {name for s in subs for name in s.cells}
    assert course.quiz is not None
    quiz = course.quiz
    banks = [load_bank(q, quiz.banks, quiz.formulas) for q in quiz.quizzes]
    banks = [b for b in banks if any(quiz_cell_id(b.quiz, q.id) in cells for q in b.questions)]
    graded_subs = [s for s in subs if s.autograded]
    groups: list[GroupStats] = []
    items: list[ItemStats] = []
    notes: list[str] = []
    analyses: list[str] = []
    for bank in banks:
        ids = [quiz_cell_id(bank.quiz, q.id) for q in bank.questions]
        groups.append(
            GroupStats(
                bank.quiz,
                sum(q.points for q in bank.questions),
                [sum(s.cells[c].score for c in ids if c in s.cells) for s in subs],
            )
        )
        graded = {s.student: Graded(s.student, 0, []) for s in graded_subs}
        for question, cid in zip(bank.questions, ids, strict=True):
            stats = ItemStats(bank.quiz, question.id, _prompt(question.prompt), question.points)
            for sub in graded_subs:
                cell = sub.cells.get(cid)
                if cell is None:
                    continue
                result = _quiz_result(Result, sub.records.get(cid), cell, question)
                graded[sub.student].results.append(result)
                if cell.needs_manual_grade:
                    stats.pending += 1
                    continue
                stats.graded += 1
                if cell.score >= cell.max_score:
                    stats.passed += 1
                elif result.status == "unanswered":
                    stats.not_attempted += 1
                elif result.status == "invalid":
                    stats.hints["an answer in the wrong format"] += 1
                else:
                    for label in result.misconceptions or ["(no misconception named)"]:
                        meaning = bank.misconceptions.get(label, "")
                        stats.hints[f"{label}: {meaning}" if meaning else label] += 1
            items.append(stats)
        complete = [g for g in graded.values() if len(g.results) == len(bank.questions)]
        if complete:
            analyses.append(format_item_analysis(bank, item_analysis(bank, complete)))
    return ClassReport(
        assignment,
        "quiz",
        "question",
        sum(g.points for g in groups),
        {s.student: s.total for s in subs},
        groups,
        _most_failed_first(items),
        notes,
        [s.student for s in subs if not s.autograded],
        "\n\n".join(analyses),
    )


def _prompt(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _quiz_result(result_cls, record: dict | None, cell: Cell, question):
    """The recorded result of one answer; a hand-graded (or unrecorded) one from the gradebook."""
    from attention_course.quiz import types

    fraction = cell.score / cell.max_score if cell.max_score else 0.0
    saved = record.get("result") if isinstance(record, dict) else None
    if isinstance(saved, dict) and cell.manual_score is None:
        try:
            return result_cls(**saved)
        except TypeError:
            pass
    if cell.needs_manual_grade:
        status = "needs_review"
    elif types.of(question).hand_graded and cell.manual_score is None and cell.auto_score == 0:
        status = "unanswered"  # nbgrader gives 0 to an answer cell left as it was released
    else:
        status = "correct" if fraction >= 1 else ("partial" if fraction > 0 else "wrong")
    return result_cls(question.id, status, fraction, question.points)


def class_report(assignment: str, root: Path) -> ClassReport:
    """The report of one assignment (or the graded quiz) from the course's gradebook. A
    submission whose scores are not reliable (its grading failed or did not finish) is left
    out of every figure and named."""
    course = Course.load(root)
    if assignment not in course.all_assignments:
        known = ", ".join(course.all_assignments)
        raise ReportError(f"unknown assignment {assignment!r} (known: {known})")
    found = read_class(assignment, root)
    if not found:
        raise ReportError(
            f"no submissions of {assignment} in the gradebook of {root} "
            f"(run `attention-course autograde {assignment}` first)"
        )
    subs = [sub for sub in found if not sub.unreliable]
    if not subs:
        raise ReportError(
            f"no submission of {assignment} has reliable scores in the gradebook of {root}: "
            f"the grading of each failed or did not finish (run `attention-course autograde "
            f"{assignment}` again)"
        )
    if assignment == course.quiz_assignment:
        report = quiz_report(course, assignment, subs)
    else:
        report = function_report(course, assignment, subs)
    report.unreliable = {sub.student: sub.unreliable for sub in found if sub.unreliable}
    report.late = {sub.student: sub.late_penalty for sub in subs if sub.late_penalty}
    return report
