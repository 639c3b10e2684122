"""What a graded quiz answer must look like, kept in its answer cell without the key.

Each answer cell of the graded quiz notebook carries ``metadata.attention_course.answer_form``:
the question's type and the ids an answer may name (choice letters, matching items), nothing of
the key. With it the student's own Jupyter server (Validate, integrations/jupyter_validate.py)
says which answers cannot be graded before the student submits, in the words that ``check`` and
the feedback use (:func:`problem`, which the grading of an answer calls too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attention_course.quiz import types
from attention_course.quiz.answer_core import InvalidAnswer
from attention_course.quiz.model import Choice, Question

META_KEY = "attention_course"
FORM_KEY = "answer_form"
NO_ANSWER = "No answer given."


def answer_form(question: Question) -> dict[str, Any]:
    """The key-free form of ``question``'s answers, for its answer cell's metadata."""
    return {
        "type": question.type,
        "choices": [c.id for c in question.choices],
        "items": list(question.items),
    }


def problem(question: Question, raw: object) -> tuple[str, Any]:
    """("unanswered" or "invalid", the feedback line) when ``raw`` cannot be graded, else
    ("", the answer as read)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return "unanswered", NO_ANSWER
    try:
        return "", types.of(question).parse(question, raw)
    except InvalidAnswer as exc:
        return "invalid", f"Invalid answer: {exc}."


def form_problem(form: Mapping[str, Any], raw: object) -> str | None:
    """Why ``raw`` cannot be graded as an answer of ``form`` (the feedback line), or None:
    well-formed (right or wrong: only the key, which the form lacks, tells) or a type this
    engine does not know, or one marked by hand."""
    qtype = types.get(form.get("type"))
    if qtype is None or qtype.hand_graded:
        return None
    ids = [str(i) for i in form.get("choices", [])]
    question = Question(
        id="",
        type=qtype.name,
        section="",
        prompt="",
        choices=tuple(Choice(i, "") for i in ids),
        items=tuple(str(i) for i in form.get("items", [])),
    )
    status, said = problem(question, raw)
    return said if status else None
