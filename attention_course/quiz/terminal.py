"""Taking a quiz in a terminal: showing questions, reading answers, giving feedback at once."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from attention_course.quiz.checking import Result
from attention_course.quiz.results import format_points
from attention_course.quiz.sessions import Shown

WIDTH = 88


class Session(Protocol):
    title: str

    def questions(self) -> list[Shown]: ...

    def check(self, question_id: str, raw: Any) -> Result: ...


def render_question(shown: Shown, number: int, total: int) -> str:
    """A question as text: prompt, choices or items, and the expected answer format."""
    points = f"{format_points(shown.points)} point" + ("" if shown.points == 1 else "s")
    lines = [f"[{number}/{total}] {shown.id} ({points})"]
    lines += textwrap.wrap(shown.prompt, WIDTH, initial_indent="  ", subsequent_indent="  ")
    if shown.items:
        lines.append("  Items: " + ", ".join(shown.items))
        lines.append("  Options:")
    for cid, text in shown.choices:
        lines += textwrap.wrap(
            text, WIDTH, initial_indent=f"    {cid}) ", subsequent_indent="       "
        )
    lines.append(f"  Answer format: {shown.format}.")
    return "\n".join(lines)


def render_result(result: Result) -> str:
    """What the student sees: the final outcome only (a free-text answer is marked by hand, so
    it shows no score here)."""
    if result.status == "needs_review":
        lines = ["  -> recorded (marked by hand)"]
    else:
        lines = [
            f"  -> {result.status} ({format_points(result.score)}/{format_points(result.points)})"
        ]
    for line in result.feedback:
        lines += textwrap.wrap(line, WIDTH, initial_indent="     ", subsequent_indent="     ")
    return "\n".join(lines)


def summary(results: list[Result]) -> str:
    marked = [r for r in results if r.status != "needs_review"]
    by_hand = [r for r in results if r.status == "needs_review"]
    score, points = sum(r.score for r in marked), sum(r.points for r in marked)
    text = f"Score: {format_points(score)} / {format_points(points)}"
    if by_hand:
        names = ", ".join(r.question for r in by_hand)
        text += (
            f" (+ {format_points(sum(r.points for r in by_hand))} points marked by hand: {names})"
        )
    return text


def run_with_answers(session: Session, answers: dict[str, Any], out: TextIO) -> list[Result]:
    """Non-interactive: check every question against ``answers`` and print the feedback."""
    questions = session.questions()
    results: list[Result] = []
    print(session.title, file=out)
    for n, shown in enumerate(questions, 1):
        result = session.check(shown.id, answers.get(shown.id))
        results.append(result)
        print("", file=out)
        print(render_question(shown, n, len(questions)), file=out)
        print(f"  Your answer: {answers.get(shown.id)!r}", file=out)
        print(render_result(result), file=out)
    print(summary(results), file=out)
    return results


def render_invalid(result: Result) -> str:
    """An answer in the wrong format, said once, before the question is asked again."""
    reason = " ".join(result.feedback) or "Invalid answer."
    lines = textwrap.wrap(reason, WIDTH, initial_indent="  ", subsequent_indent="  ")
    return "\n".join([*lines, "  Please answer again."])


def run_interactive(
    session: Session, ask: Callable[[str], str], out: TextIO, answers: dict[str, Any] | None = None
) -> list[Result]:
    """Interactive: ask each question; an answer in the wrong format is explained and asked
    again (it gets no verdict). The accepted answers are put into ``answers``."""
    questions = session.questions()
    results: list[Result] = []
    print(session.title, file=out)
    print("Type your answer and press Enter; an empty line skips the question.", file=out)
    for n, shown in enumerate(questions, 1):
        print("", file=out)
        print(render_question(shown, n, len(questions)), file=out)
        while True:
            try:
                line = ask("  your answer> ")
            except EOFError:
                print("", file=out)
                print(summary(results), file=out)
                return results
            raw = line.strip() or None
            result = session.check(shown.id, raw)
            if result.status != "invalid":
                break
            print(render_invalid(result), file=out)
        print(render_result(result), file=out)
        if answers is not None and raw is not None:
            answers[shown.id] = raw
        results.append(result)
    print("", file=out)
    print(summary(results), file=out)
    return results
