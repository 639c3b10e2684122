"""The question types: a registry of one module per type, each with all that is type-specific.

A type is a :class:`QuestionType` (see base.py for the operations): how its fields are read from
a bank, the key of a variant, how an answer is read and checked (status, score, feedback), its
sample right, wrong and invalid answers, its self-check entries and its GIFT, QTI, jupyterquiz
and notebook rendering. The generic modules (model, variants, checking, selfcheck, samples,
validation, notebooks, the exports, the command line and the class report) look a question's
type up here (``get(question.type)``) and never branch on its name.

Adding a question type: write ``attention_course/quiz/types/<name>.py`` with a subclass of
:class:`QuestionType` (set ``name``, ``title``, ``answer_format`` and ``exports``, the formats
it can go to; implement the operations in base.OPERATIONS that raise NotImplementedError, and the
export operations of the formats it lists) and a module-level ``TYPE = <Class>()``; then add the
module to ``BUILT_IN`` below. Nothing else changes: banks can use the type, it is graded,
validated, sampled in the tests, and exported to the formats it lists (others leave it out or say
it cannot go there). Two limits: the student-side checker that self-check keys and the widgets
notebook embed verbatim (quiz/answer_core.py, notebooks.WIDGETS_UI) is standard-library code
that knows the built-in types by name, so a new type offers "selfcheck" and "widgets" only once
answer_core's ``parse_answer``, ``canonical`` and ``check_selfcheck`` know it too; and a type
that needs new Question fields adds them to model.Question.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_course.quiz.types import (
    free_text,
    matching,
    multiple_select,
    numeric,
    shape,
    single_choice,
)
from attention_course.quiz.types.base import EXPORT_OPERATIONS, OPERATIONS, QuestionType

if TYPE_CHECKING:
    from attention_course.quiz.model import Question

__all__ = ["EXPORT_OPERATIONS", "OPERATIONS", "TYPES", "QuestionType", "get", "of", "register"]

BUILT_IN = (single_choice, multiple_select, numeric, shape, matching, free_text)

TYPES: dict[str, QuestionType] = {}  # name -> type, in the order they were registered


def register(qtype: QuestionType) -> QuestionType:
    """Make ``qtype`` usable in banks under its name; return it."""
    if not qtype.name or not qtype.name.isidentifier():
        raise ValueError(f"a question type needs an identifier as name, not {qtype.name!r}")
    if qtype.name in TYPES:
        raise ValueError(f"question type {qtype.name!r} is already registered")
    TYPES[qtype.name] = qtype
    return qtype


def unregister(name: str) -> None:
    """Forget the type ``name`` (for tests that register a type of their own)."""
    del TYPES[name]


def get(name: object) -> QuestionType | None:
    """The type registered as ``name`` (None when there is none)."""
    return TYPES.get(name) if isinstance(name, str) else None


def of(question: Question) -> QuestionType:
    """The type of a question read from a bank (whose type is always registered)."""
    return TYPES[question.type]


def names() -> tuple[str, ...]:
    return tuple(TYPES)


for _module in BUILT_IN:
    register(_module.TYPE)
