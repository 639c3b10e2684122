"""What the three LMS exports share: which variants of which questions go out."""

from __future__ import annotations

from dataclasses import dataclass

from attention_course.quiz.model import Bank, Question
from attention_course.quiz.variants import Instance, for_student, instantiate


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


def shape_forms(shape: tuple[int, ...]) -> list[str]:
    """Ways to write a shape that a text-matching LMS should accept."""
    inner = ", ".join(str(v) for v in shape)
    tight = ",".join(str(v) for v in shape)
    trail = "," if len(shape) == 1 else ""
    return [f"({inner}{trail})", f"({tight}{trail})", inner, "x".join(str(v) for v in shape)]
