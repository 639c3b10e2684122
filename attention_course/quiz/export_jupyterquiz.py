"""jupyterquiz JSON export: the list of questions ``jupyterquiz.display_quiz`` shows.

jupyterquiz checks answers in the browser, so this file holds the answers in plain text: it is
for an instructor's page or a notebook where that is acceptable, not a way to hide a key (use
the self-check export for that). One variant per templated question (the given student's, else
variant 0). Matching becomes one multiple-choice question per item; shapes are "string"
questions; free-text questions are left out (jupyterquiz cannot take them).
"""

from __future__ import annotations

from typing import Any

from attention_course.quiz import types
from attention_course.quiz.exports import ExportItem
from attention_course.quiz.model import Bank

TYPES = ("multiple_choice", "many_choice", "numeric", "string")


def to_jupyterquiz(bank: Bank, items: list[ExportItem]) -> tuple[list[dict[str, Any]], list[str]]:
    """The jupyterquiz question list, and notes on what could not be exported."""
    questions, notes = [], []
    for item in items:
        qtype = types.of(item.question)
        if "jupyterquiz" not in qtype.exports:
            notes.append(
                f"{item.question.id}: {qtype.title} is not supported by jupyterquiz, left out"
            )
            continue
        questions += qtype.jupyterquiz(item)
    return questions, notes
