"""Numeric: a number, right within an absolute or relative tolerance."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attention_course.quiz.answer_core import FORMATS, buckets_around, format_number, parse_number
from attention_course.quiz.gift_text import feedback, gift_number
from attention_course.quiz.model import Tolerance
from attention_course.quiz.types.values import ValueType

if TYPE_CHECKING:
    from attention_course.quiz.exports import ExportItem
    from attention_course.quiz.model import Question
    from attention_course.quiz.reading import _Reader
    from attention_course.quiz.variants import Instance


def read_tolerance(reader: _Reader, raw: Any, qid: str) -> Tolerance | None:
    if raw is None:
        reader.problem(qid, "numeric question without tolerance (give {abs: x} or {rel: y})")
        return None
    if not isinstance(raw, dict) or len(raw) != 1 or next(iter(raw)) not in ("abs", "rel"):
        reader.problem(qid, f"tolerance must be {{abs: x}} or {{rel: y}}, not {raw!r}")
        return None
    kind, value = next(iter(raw.items()))
    number = reader.number(value, qid, f"tolerance {kind}")
    if number is None:
        return None
    if number < 0 or (kind == "rel" and not 0 < number < 1):
        reader.problem(qid, f"tolerance {kind} out of range: {value!r}")
        return None
    return Tolerance(**{kind: number})


def _tolerance_of(question: Question) -> Tolerance:
    """A numeric question's tolerance (reading gives every numeric question one)."""
    if question.tolerance is None:
        raise ValueError(f"numeric question {question.id!r} has no tolerance")
    return question.tolerance


def _tolerance(question: Question) -> dict[str, float | None]:
    tol = _tolerance_of(question)
    return {"abs": tol.abs, "rel": tol.rel}


class Numeric(ValueType):
    name = "numeric"
    title = "numeric"
    answer_format = FORMATS[name]

    def read(self, reader: _Reader, raw: dict, qid: str) -> dict | None:
        found = reader.key_or_template(raw, qid)
        tolerance = read_tolerance(reader, raw.get("tolerance"), qid)
        if found is None:
            return None
        answer, template = found
        if template is None:
            answer = reader.number(answer, qid, "answer")
        return {
            "answer": answer,
            "template": template,
            "tolerance": tolerance,
            "wrong_answers": reader.wrong_answers(raw, qid, self.value_reader(reader)),
        }

    @staticmethod
    def value_reader(reader: _Reader) -> Callable[[Any, str], Any]:
        """How a typical wrong answer's fixed value is read."""
        return lambda value, qid: reader.number(value, qid, "value")

    def key_problem(self, question: Question, key: Any, variant: int) -> str | None:
        return None if math.isfinite(key) else f"key is not finite in variant {variant}"

    def normalize(self, value: Any) -> Any:
        return float(value)

    def matches(self, question: Question, given: Any, target: Any) -> bool:
        return _tolerance_of(question).accepts(given, target)

    def parse(self, question: Question, raw: object) -> Any:
        return parse_number(raw)

    def sample(self, value: Any) -> Any:
        return int(value) if float(value).is_integer() else value

    def made_up_wrong(self, key: Any) -> Any:
        return 2 * key + 1

    def invalid_answer(self, instance: Instance) -> Any:
        return "about a hundred"

    def answer_example(self, question: Question) -> str | None:
        return "answer = 1.5e6"

    def selfcheck_fields(self, question: Question) -> dict[str, Any]:
        return {"tolerance": _tolerance(question)}

    def selfcheck_forms(self, question: Question, value: Any) -> list[str]:
        return buckets_around(value, _tolerance(question))

    def gift_answers(self, item: ExportItem, index: int) -> str:
        q, inst = item.question, item.instances[index]
        tol = _tolerance_of(q).half_width(inst.key)
        lines = [f"#={gift_number(inst.key)}:{gift_number(tol)}{feedback(q.explanation)}"]
        for w in inst.wrong_answers:
            lines.append(f"=%0%{gift_number(w.value)}:{gift_number(tol)}{feedback(w.feedback)}")
        return "{\n" + "\n".join(lines) + "\n}"

    def qti_block(self, question: Question, instance: Instance, number: int) -> list[str]:
        half = _tolerance_of(question).half_width(instance.key)
        answer = f"=   {format_number(instance.key)} +- {format_number(half)}"
        return [*self.qti_prompt(question, instance, number), answer]

    def jupyterquiz(self, item: ExportItem) -> list[dict[str, Any]]:
        q, inst = item.question, item.instances[0]
        half = _tolerance_of(q).half_width(inst.key)
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


TYPE = Numeric()
