"""A question as one student sees it: their variant's numbers, prompt and computed key."""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from attention_course.quiz import formulas, types
from attention_course.quiz.model import Bank, Question
from attention_course.quiz.seeding import draw_parameters, variant_of


@dataclass(frozen=True)
class Reaction:
    """A typical wrong answer of a numeric or shape question, resolved for one variant."""

    value: Any
    misconception: str | None
    feedback: str


@dataclass(frozen=True)
class Instance:
    """One question for one student (or one variant)."""

    quiz: str
    question: Question
    variant: int
    params: dict[str, Any]
    prompt: str
    key: Any  # choice id, frozenset of ids, float, shape tuple, item->option dict; None: free text
    wrong_answers: tuple[Reaction, ...]


def placeholders(text: str) -> list[str]:
    """Names of the ``{name}`` fields in ``text``."""
    return [field for _, field, _, _ in string.Formatter().parse(text) if field]


def question_parameters(bank: Bank, question: Question) -> list[str]:
    """The bank parameters this question's prompt, key and wrong answers depend on (sorted)."""
    return sorted(set(placeholders(question.prompt)) | set(answer_parameters(question)))


def answer_parameters(question: Question) -> list[str]:
    """The bank parameters this question's key and wrong answers depend on (sorted)."""
    names: set[str] = set()
    for name in [question.template, *(w.formula for w in question.wrong_answers)]:
        if name is not None and name in formulas.FORMULAS:
            names.update(formulas.parameters_of(name))
    return sorted(names)


def variant_parameters(bank: Bank, variant: int) -> dict[str, Any]:
    return draw_parameters(bank.quiz, variant, bank.parameters)


def student_variant(bank: Bank, student_id: str) -> int:
    return variant_of(bank.quiz, student_id, bank.variant_count)


def instantiate(bank: Bank, question: Question, variant: int) -> Instance:
    """Compute prompt, key and typical wrong answers of ``question`` in ``variant``."""
    params = variant_parameters(bank, variant)
    prompt = question.prompt.format(**params) if bank.parameters else question.prompt
    qtype = types.of(question)
    key = qtype.key(question, params)
    wrong = []
    for w in question.wrong_answers:
        raw = formulas.evaluate(w.formula, params) if w.formula else w.value
        value = qtype.normalize(raw)
        if value != key and not qtype.matches(question, value, key):
            wrong.append(Reaction(value, w.misconception, w.feedback))
    return Instance(bank.quiz, question, variant, params, prompt, key, tuple(wrong))


def for_student(bank: Bank, question: Question, student_id: str) -> Instance:
    return instantiate(bank, question, student_variant(bank, student_id))
