"""Numeric: a number, right within an absolute or relative tolerance."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attention_course.quiz.answer_core import FORMATS, buckets_around, format_number, parse_number
from attention_course.quiz.gift_text import feedback, gift_number
from attention_course.quiz.model import Tolerance
from attention_course.quiz.moodle_text import answer_el, question_el, value_el
from attention_course.quiz.qti_text import md
from attention_course.quiz.types.values import ValueType

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

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

    def show(self, value: Any) -> str:
        return format_number(value)

    def gift_answers(self, item: ExportItem, index: int) -> str:
        """The key and each typical wrong answer (0%) as value:tolerance, in the checker's order
        (Moodle takes the first answer whose interval holds the number)."""
        q, inst = item.question, item.instances[index]
        tol = _tolerance_of(q)
        lines = [f"#={gift_number(inst.key)}:{gift_number(tol.half_width(inst.key))}"]
        lines[0] += feedback(q.explanation)
        for w in self.distinct_wrong(inst):
            width = gift_number(tol.half_width(w.value))
            lines.append(f"=%0%{gift_number(w.value)}:{width}{feedback(w.feedback)}")
        return "{\n" + "\n".join(lines) + "\n}"

    def qti_block(self, question: Question, instance: Instance, number: int) -> list[str]:
        """Canvas numerical answers are all right answers: the typical wrong answers' feedback
        goes to the question's incorrect-answer comment."""
        half = _tolerance_of(question).half_width(instance.key)
        lines = self.qti_prompt(question, instance, number)
        note = self.wrong_answers_note(instance)
        if note:
            lines.append(f"-   {md(note)}")
        return [*lines, f"=   {format_number(instance.key)} +- {format_number(half)}"]

    def moodle_question(self, item: ExportItem, index: int, title: str) -> Element:
        """The key and each typical wrong answer (0%, with its feedback), each with its
        tolerance, in the checker's order; no units."""
        q, inst = item.question, item.instances[index]
        tol = _tolerance_of(q)
        el = question_el("numerical", title, inst.prompt, q.points, q.explanation)
        answers = [(1.0, inst.key, q.explanation)]
        answers += [(0.0, w.value, w.feedback) for w in self.distinct_wrong(inst)]
        for fraction, value, note in answers:
            answer = answer_el(el, fraction, gift_number(value), note)
            value_el(answer, "tolerance", gift_number(tol.half_width(value)))
        for setting, value in (("unitgradingtype", "0"), ("unitpenalty", "0"), ("showunits", "3")):
            value_el(el, setting, value)
        value_el(el, "unitsleft", "0")
        return el

    def jupyterquiz(self, item: ExportItem) -> list[dict[str, Any]]:
        """Ranges for every tolerance: jupyterquiz's ranges are [low, high), so high is the next
        float above the course's upper bound, and the accepted set is the same closed interval."""
        q, inst = item.question, item.instances[0]
        tol = _tolerance_of(q)
        answers: list[dict[str, Any]] = [
            self._jq_answer(tol, inst.key, True, q.explanation or "Correct.")
        ]
        for w in self.distinct_wrong(inst):
            answers.append(self._jq_answer(tol, w.value, False, w.feedback or "Not quite."))
        answers.append({"type": "default", "feedback": "Not quite: try again."})
        return [{"question": inst.prompt, "type": "numeric", "answers": answers}]

    @staticmethod
    def _jq_answer(tol: Tolerance, value: float, correct: bool, note: str) -> dict[str, Any]:
        low, high = tol.bounds(value)
        if low == high:
            return {"type": "value", "value": value, "correct": correct, "feedback": note}
        span = [low, math.nextafter(high, math.inf)]
        return {"type": "range", "range": span, "correct": correct, "feedback": note}


TYPE = Numeric()
