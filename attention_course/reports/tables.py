"""Presenting grades: a per-function table for people, Gradescope's results.json for machines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from attention_course.course import SETUP_CELL_ID, Course, grade_cell_id
from attention_course.grading.feedback import UNSANDBOXED_NOTE, cell_feedback, graded_by
from attention_course.grading.graders import GradeReport
from attention_course.inert import GRADESCOPE_PLAIN_TEXT
from attention_course.settings import GRADESCOPE, Gradescope

if TYPE_CHECKING:
    from attention_course.classgrade.run import ClassRun


def function_table(report: GradeReport, verbose: bool = True) -> str:
    width = max([len("function")] + [len(f) for f in report.functions])
    lines = [f"{report.assignment}", f"{'function':<{width}}  score", "-" * (width + 14)]
    for name, f in report.functions.items():
        lines.append(f"{name:<{width}}  {f.score:>5g} / {f.max_score:g}")
    lines.append("-" * (width + 14))
    lines.append(f"{'total':<{width}}  {report.score:>5g} / {report.max_score:g}")
    if verbose:
        for name, f in report.functions.items():
            if f.score < f.max_score:
                lines += ["", cell_feedback(report, name).rstrip()]
    for note in report.notes:
        lines.append(f"note: {note}")
    if report.unsandboxed:
        lines.append(f"note: {UNSANDBOXED_NOTE}")
    return "\n".join(lines)


def gradescope_results(report: GradeReport, shown: Gradescope = GRADESCOPE) -> dict:
    """Gradescope's autograder results.json: the score, a summary (each function's points and
    the notes of its cells) and one test per grader test (its points, its PASS/FAIL line and
    hint), each with the visibility `shown` declares; every output declared plain text."""
    summary = [f"{report.assignment}: {report.score:g} / {report.max_score:g}"]
    if report.unsandboxed:
        summary[0] += f" ({UNSANDBOXED_NOTE})"
    tests: list[dict] = []
    for i, (name, f) in enumerate(report.functions.items(), 1):
        summary.append(f"{name}: {f.score:g} / {f.max_score:g} points")
        for err in report.cell_errors:
            if err["cell_id"] in (name, SETUP_CELL_ID):
                summary.append(
                    f"  NOTE the cell {err['cell_id']!r} raised {err['error_type']}: "
                    f"{err['error_message']}"
                )
        for j, t in enumerate(f.tests, 1):
            tests.append(
                {
                    "name": f"{name}: {t.description}",
                    "number": f"{i}.{j}",
                    "score": t.earned,
                    "max_score": t.points,
                    "status": "passed" if t.passed else "failed",
                    "output": t.feedback(hint=shown.hints),
                    "tags": [name],
                    "visibility": shown.tests,
                }
            )
    summary.append(graded_by())
    return {
        **GRADESCOPE_PLAIN_TEXT,
        "score": report.score,
        "max_score": report.max_score,
        "output": "\n".join(summary),
        "visibility": shown.result,
        "stdout_visibility": shown.stdout,
        "tests": tests,
    }


UNRELIABLE_MARK = "?"


def class_table(
    rows: dict[str, dict[str, float]],
    columns: list[str],
    title: str,
    records: dict[str, dict] | None = None,
    reasons: bool = True,
) -> str:
    """Students down, functions across: the scores stored in the gradebook. With `records`
    (what the gradebook keeps of each submission's last grading, gradebook.Records), a
    submission whose scores are not reliable (being graded, or its grading failed) shows
    UNRELIABLE_MARK instead of any score, said below the table; with `reasons`, each one's
    reason follows, then those of the submissions not graded (0 points)."""
    from attention_course.classgrade.nbgrader_api import LATE_PENALTY, grade
    from attention_course.classgrade.outcomes import FAILED, UNRELIABLE

    records = records or {}
    marked = {s for s in rows if records.get(s, {}).get("status") in UNRELIABLE}
    late = any(LATE_PENALTY in row for row in rows.values())
    if late:  # the late penalty's own column; the total is the grade, the penalty taken off
        rows = {
            s: {**row, "late": -row[LATE_PENALTY], "total": grade(row)}
            if LATE_PENALTY in row
            else row
            for s, row in rows.items()
        }
        columns = [*columns, "late"]
    heads = [c.removesuffix("_tests") for c in columns] + ["total"]
    sw = max([len("student")] + [len(s) for s in rows])
    widths = [max(len(h), 5) for h in heads]
    lines = [
        title,
        "  ".join(
            [f"{'student':<{sw}}"] + [f"{h:>{w}}" for h, w in zip(heads, widths, strict=True)]
        ),
    ]
    for student in sorted(rows):
        cells = [rows[student].get(c) for c in columns + ["total"]]
        text = ["-" if v is None else f"{v:g}" for v in cells]
        if student in marked:
            text = [UNRELIABLE_MARK] * len(text)
        lines.append(
            "  ".join(
                [f"{student:<{sw}}"] + [f"{t:>{w}}" for t, w in zip(text, widths, strict=True)]
            )
        )
    if late:
        lines.append(
            "late: nbgrader's late penalty (c.LateSubmissionPlugin.penalty_method, the due date "
            "with the student's extension), taken off the total once"
        )
    if marked:
        lines.append(
            f"{UNRELIABLE_MARK} not a score: its grading failed or did not finish, and the "
            "gradebook's scores for it are not reliable (autograde the assignment again):"
        )
        for student in sorted(marked) if reasons else []:
            record = records[student]
            why = "grading failed: " if record.get("status") == FAILED else ""
            lines.append(f"  {student}: {why}{record.get('reason') or 'being graded'}")
    refused = sorted(s for s in rows if records.get(s, {}).get("status") == "not graded")
    if refused and reasons:
        lines.append("not graded (0 points):")
        lines += [f"  {s}: {records[s].get('reason', '')}" for s in refused]
    return "\n".join(lines)


def score_columns(assignment: str, root: Path) -> list[str]:
    """The grade cells to show: each graded function's, in notebook order; for the quiz, the
    total only."""
    course = Course.load(root)
    if assignment in course.assignments:
        return [grade_cell_id(f) for f in course.assignments[assignment].graded]
    return []  # the quiz: its many questions are in `attention-course report`


def class_run_lines(run: ClassRun, graded: bool = True) -> list[str]:
    """What an autograde run did, in words: counts, then every submission not graded and why
    (graded=False leaves out the count line)."""
    lines = []
    if graded:
        counts = [
            f"{run.count(status)} {label}"
            for status, label in (
                ("graded", "graded"),
                ("unchanged", "unchanged since last graded"),
                ("not graded", "not graded"),
                ("busy", "graded by another run"),
                ("error", "grading errors"),
            )
            if run.count(status)
        ]
        lines.append(f"{run.assignment}: " + ", ".join(counts))
    for student, outcome in sorted(run.outcomes.items()):
        if outcome.status in ("not graded", "error") or (
            outcome.status == "unchanged" and outcome.reason
        ):
            kind = "grading error" if outcome.status == "error" else "not graded"
            replaced = ""
            if outcome.replaced is not None:
                replaced = f" (it replaces an earlier version's {outcome.replaced:g} points: 0)"
            lines.append(f"  {student}: {kind}: {outcome.reason}{replaced}")
    if run.count("error"):
        lines.append(
            "  (a grading error is not the student's fault: it is tried again by the next run;"
            " until then its scores in the gradebook are marked as not reliable)"
        )
    return lines
