"""What the three LMS exports share: which variants of which questions go out."""

from __future__ import annotations

from dataclasses import dataclass

from attention_course.quiz import types
from attention_course.quiz.answer_core import shape_forms
from attention_course.quiz.model import Bank, Question
from attention_course.quiz.variants import Instance, for_student, instantiate

__all__ = ["LIMITS", "ExportItem", "exportable", "export_items", "left_out", "shape_forms"]

# What a format cannot carry, or where its system reads answers differently from the course:
# written into the export where it has comments, and printed by `quiz export` (docs/quiz.md).
LIMITS = {
    "gift": (
        "GIFT has no question points: Moodle imports every question as 1 point (the points are "
        "in a comment; use moodlexml to carry them)",
        "GIFT has no feedback for matching options",
        "Moodle's numerical questions also read thousands separators (1,000) and powers of ten "
        "written 1.5x10^6, which the course calls invalid",
    ),
    "moodlexml": (
        "Moodle's numerical questions also read thousands separators (1,000) and powers of ten "
        "written 1.5x10^6, which the course calls invalid",
    ),
    "qti": (
        "Canvas's numerical and short answers are all right answers: the typical wrong answers' "
        "feedback is in the incorrect-answer comment, not per answer",
    ),
    "jupyterquiz": (
        "jupyterquiz has no scores: partial credit shows as incorrect",
        "jupyterquiz also reads a fraction such as 3/4 for a number, which the course calls "
        "invalid",
    ),
}


@dataclass(frozen=True)
class ExportItem:
    """A question with the variants to export (one, unless it is templated)."""

    question: Question
    instances: tuple[Instance, ...]


def export_items(bank: Bank, variants: int, student: str | None = None) -> list[ExportItem]:
    """Every question with up to ``variants`` distinct variants (distinct prompts), or only the
    variant of ``student`` when one is given."""
    items = []
    for q in bank.questions:
        if student is not None:
            chosen = [for_student(bank, q, student)]
        elif not q.templated:
            chosen = [instantiate(bank, q, 0)]
        else:
            chosen, prompts = [], set()
            for v in range(bank.variant_count):
                inst = instantiate(bank, q, v)
                if inst.prompt not in prompts:
                    prompts.add(inst.prompt)
                    chosen.append(inst)
                if len(chosen) == variants:
                    break
        items.append(ExportItem(q, tuple(chosen)))
    return items


def exportable(items: list[ExportItem], fmt: str) -> list[ExportItem]:
    """The items whose question type can be exported to ``fmt``."""
    return [item for item in items if fmt in types.of(item.question).exports]


def left_out(bank: Bank, fmt: str) -> list[str]:
    """Notes on the questions of ``bank`` whose type cannot be exported to ``fmt``."""
    return [
        f"{q.id}: {types.of(q).title} is not supported by {fmt}, left out"
        for q in bank.questions
        if fmt not in types.of(q).exports
    ]
