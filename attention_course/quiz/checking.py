"""Grading one answer with the instructor's bank: status, score, feedback, misconceptions."""

from __future__ import annotations

from attention_course.quiz import types
from attention_course.quiz.answer_form import problem
from attention_course.quiz.results import RECORDED, STATUSES, Result
from attention_course.quiz.variants import Instance

__all__ = ["RECORDED", "STATUSES", "Result", "grade"]


def grade(instance: Instance, raw: object) -> Result:
    """Grade ``raw`` (as the student wrote it) against ``instance``'s key."""
    q = instance.question
    qtype = types.of(q)
    status, value = problem(q, raw)
    if status:  # unanswered or invalid: the line that says why
        return qtype.result(q, status, 0.0, [value])
    return qtype.check(instance, value, qtype.canonical(value))
