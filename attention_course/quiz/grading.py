"""Grading a class: every student's responses, a grade table and an item analysis."""

from __future__ import annotations

import csv
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from attention_course import settings
from attention_course.inert import csv_row
from attention_course.quiz import types
from attention_course.quiz.checking import Result, grade
from attention_course.quiz.model import Bank
from attention_course.quiz.responses import Responses
from attention_course.quiz.results import format_points
from attention_course.quiz.variants import for_student


@dataclass
class Graded:
    student: str
    variant: int
    results: list[Result]
    source: str = ""

    @property
    def total(self) -> float:
        return round(sum(r.score for r in self.results), 6)

    @property
    def needs_review(self) -> list[str]:
        return [r.question for r in self.results if r.status == "needs_review"]


def grade_responses(bank: Bank, responses: Responses) -> Graded:
    """Grade one student's answers, each against that student's own variant."""
    results = []
    for question in bank.questions:
        instance = for_student(bank, question, responses.student)
        results.append(grade(instance, responses.answers.get(question.id)))
    variant = for_student(bank, bank.questions[0], responses.student).variant
    return Graded(responses.student, variant, results, str(responses.path or ""))


def write_grades_csv(bank: Bank, graded: list[Graded], out: Path) -> None:
    """One row per student: the score of every question, total, max and what needs review."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)  # a student id may start with "="
        ids = [q.id for q in bank.questions]
        writer.writerow(["student", "variant", *ids, "total", "max", "needs_review", "file"])
        for g in graded:
            scores = [format_points(r.score) for r in g.results]
            writer.writerow(
                csv_row(
                    [
                        g.student,
                        g.variant,
                        *scores,
                        format_points(g.total),
                        format_points(bank.max_score),
                        " ".join(g.needs_review),
                        g.source,
                    ]
                )
            )


@dataclass
class ItemStats:
    question: str
    answered: int = 0
    correct: int = 0
    mean_fraction: float = 0.0
    statuses: Counter = field(default_factory=Counter)
    wrong: Counter = field(default_factory=Counter)  # canonical wrong answer -> count
    labels: dict[str, Counter] = field(default_factory=dict)  # wrong answer -> misconceptions

    @property
    def share_correct(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


def item_analysis(bank: Bank, graded: list[Graded]) -> list[ItemStats]:
    """Per question: share correct, mean score and the wrong answers with their misconceptions."""
    stats = []
    for index, question in enumerate(bank.questions):
        item = ItemStats(question.id)
        fractions = []
        for g in graded:
            r = g.results[index]
            item.statuses[r.status] += 1
            if r.status == "unanswered":
                continue
            item.answered += 1
            fractions.append(r.fraction)
            item.correct += r.status == "correct"
            if r.status in ("wrong", "partial") and r.answer:
                shown = r.answer
                if question.templated:  # numbers differ per student: group by misconception
                    shown = "(value of " + ", ".join(r.misconceptions) + ")"
                    if not r.misconceptions:
                        shown = f"(another wrong {types.of(question).value_noun})"
                item.wrong[shown] += 1
                item.labels.setdefault(shown, Counter()).update(r.misconceptions)
            elif r.status == "invalid":
                item.wrong["(invalid format)"] += 1
        item.mean_fraction = sum(fractions) / len(fractions) if fractions else 0.0
        stats.append(item)
    return stats


def format_item_analysis(
    bank: Bank, stats: list[ItemStats], top: int = settings.ITEM_ANALYSIS_TOP_WRONG
) -> str:
    """Item analysis as text: one block per question."""
    lines = [f"Item analysis: {bank.quiz} ({bank.title})"]
    for item in stats:
        question = bank.question(item.question)
        if question is None:  # item_analysis makes one item per question of the bank
            raise KeyError(f"no question {item.question!r} in quiz {bank.quiz!r}")
        review = item.statuses.get("needs_review", 0)
        head = (
            f"{item.question} [{question.type}, section {question.section}]: "
            f"{item.correct}/{item.answered} correct ({100 * item.share_correct:.0f}%), "
            f"mean score {100 * item.mean_fraction:.0f}%"
        )
        if item.statuses.get("unanswered"):
            head += f", {item.statuses['unanswered']} unanswered"
        if review:
            head += f", {review} to review by hand (provisional keyword score)"
        lines.append(head)
        for answer, count in item.wrong.most_common(top):
            labels = item.labels.get(answer, Counter())
            meaning = "; ".join(
                f"{label}: {bank.misconceptions.get(label, '')}"
                for label, _ in labels.most_common()
            )
            lines.append(f"    wrong {answer} x{count}" + (f" -> {meaning}" if meaning else ""))
    return "\n".join(lines)


def submitted_by(path: Path) -> str | None:
    """Who handed a response file in, by where it is, never by what it says: in nbgrader's
    layout (`submitted/<student>/<assignment>/...`, and the exchange's
    `inbound/<student>+<assignment>+<time>...`) the student folder it is in; elsewhere the
    account that owns the file, when that is neither this account nor root (a file a student
    wrote into a shared folder). None when nothing tells (the instructor's own copies)."""
    import pwd

    parts = path.resolve().parts
    for i, part in enumerate(parts[:-1]):
        if part == "submitted" and i + 2 < len(parts):
            return parts[i + 1]
        if part == "inbound" and "+" in parts[i + 1]:
            return parts[i + 1].split("+", 1)[0]
    try:
        owner = path.stat().st_uid
    except OSError:
        return None
    if owner in (0, os.getuid()):
        return None
    try:
        return pwd.getpwuid(owner).pw_name
    except KeyError:
        return str(owner)


def grade_response_files(
    bank: Bank, paths: list[Path], out: Path
) -> tuple[list[Graded], list[str]]:
    """Grade every response file; write the grades CSV to `out` (when any could be graded).
    Returns the graded responses and one line per file that could not be read or was refused.

    A file counts for the student who handed it in (submitted_by): one naming another student
    is refused. Two files for one student are both refused, never the first kept: which one is
    theirs is for the instructor to say (a classmate's file sorted first would otherwise set
    their grade)."""
    from attention_course.quiz.responses import read_responses

    errors = []
    found: dict[str, list[Responses]] = {}
    for path in paths:
        try:
            responses = read_responses(path, bank)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        handed_in = submitted_by(path)
        if handed_in is not None and handed_in != responses.student:
            errors.append(
                f"{path}: names the student {responses.student!r} but was handed in by "
                f"{handed_in!r}: refused"
            )
            continue
        found.setdefault(responses.student, []).append(responses)
    graded = []
    for student, files in found.items():
        if len(files) > 1:
            named = ", ".join(str(r.path) for r in files)
            errors.append(
                f"student {student!r} is named by {len(files)} files ({named}): none graded "
                "(grade the one that is theirs alone)"
            )
            continue
        graded.append(grade_responses(bank, files[0]))
    if graded:
        write_grades_csv(bank, graded, out)
    return graded, errors
