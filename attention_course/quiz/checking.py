"""Grading one answer with the instructor's bank: status, score, feedback, misconceptions."""

from __future__ import annotations

from attention_course.quiz import types
from attention_course.quiz.answer_core import InvalidAnswer
from attention_course.quiz.results import RECORDED, STATUSES, Result
from attention_course.quiz.variants import Instance

__all__ = ["RECORDED", "STATUSES", "Result", "grade"]


def grade(instance: Instance, raw: object) -> Result:
    """Grade ``raw`` (as the student wrote it) against ``instance``'s key."""
    q = instance.question
    qtype = types.of(q)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return qtype.result(q, "unanswered", 0.0, ["No answer given."])
    try:
        value = qtype.parse(q, raw)
    except InvalidAnswer as exc:
        return qtype.result(q, "invalid", 0.0, [f"Invalid answer: {exc}."])
    return qtype.check(instance, value, qtype.canonical(value))
