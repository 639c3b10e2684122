"""jupyterquiz JSON export: the list of questions ``jupyterquiz.display_quiz`` shows.

jupyterquiz checks answers in the browser, so this file holds the answers in plain text: it is
for an instructor's page or a notebook where that is acceptable, not a way to hide a key (use
the self-check export for that). One variant per templated question (the given student's, else
variant 0). Matching becomes one multiple-choice question per item; shapes are "string"
questions; free-text questions are left out (jupyterquiz cannot take them).
"""

from __future__ import annotations

from typing import Any

from attention_course.quiz.exports import ExportItem, shape_forms
from attention_course.quiz.model import Bank

TYPES = ("multiple_choice", "many_choice", "numeric", "string")


def _question(item: ExportItem) -> list[dict[str, Any]]:
    q, inst = item.question, item.instances[0]
    if q.type in ("single_choice", "multiple_select"):
        kind = "multiple_choice" if q.type == "single_choice" else "many_choice"
        answers = []
        for c in q.choices:
            correct = c.id == inst.key if q.type == "single_choice" else c.correct
            feedback = c.feedback or (q.explanation if correct else "Not quite.")
            answers.append(
                {"answer": c.text, "correct": correct, "feedback": feedback or "Correct."}
            )
        return [{"question": inst.prompt, "type": kind, "answers": answers}]
    if q.type == "numeric":
        half = q.tolerance.half_width(inst.key)
        answers: list[dict[str, Any]] = []
        if half == 0:
            answers.append({"type": "value", "value": inst.key, "correct": True})
        else:  # jupyterquiz ranges are [low, high)
            answers.append(
                {"type": "range", "range": [inst.key - half, inst.key + half], "correct": True}
            )
        answers[0]["feedback"] = q.explanation or "Correct."
        for w in inst.wrong_answers:
            answers.append(
                {"type": "value", "value": w.value, "correct": False, "feedback": w.feedback}
            )
        answers.append({"type": "default", "feedback": "Not quite: try again."})
        return [{"question": inst.prompt, "type": "numeric", "answers": answers}]
    if q.type == "shape":
        answers = [
            {"answer": form, "correct": True, "match_case": False, "feedback": q.explanation}
            for form in shape_forms(inst.key)
        ]
        for w in inst.wrong_answers:
            answers += [
                {"answer": form, "correct": False, "match_case": False, "feedback": w.feedback}
                for form in shape_forms(w.value)
            ]
        answers.append({"type": "default", "feedback": "Not quite: write the shape like (3, 4)."})
        return [{"question": inst.prompt, "type": "string", "answers": answers}]
    if q.type == "matching":
        out = []
        for left in q.items:
            answers = [
                {
                    "answer": o.text,
                    "correct": inst.key[left] == o.id,
                    "feedback": "Correct."
                    if inst.key[left] == o.id
                    else o.feedback or "Not quite.",
                }
                for o in q.choices
            ]
            prompt = f"{inst.prompt} ({left})"
            out.append({"question": prompt, "type": "multiple_choice", "answers": answers})
        return out
    return []  # free text: not supported by jupyterquiz


def to_jupyterquiz(bank: Bank, items: list[ExportItem]) -> tuple[list[dict[str, Any]], list[str]]:
    """The jupyterquiz question list, and notes on what could not be exported."""
    questions, notes = [], []
    for item in items:
        converted = _question(item)
        if not converted:
            notes.append(f"{item.question.id}: free text is not supported by jupyterquiz, left out")
        questions += converted
    return questions, notes
