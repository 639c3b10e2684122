"""Shape: a tensor shape such as (3, 4), right only when exactly equal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attention_course.quiz.answer_core import FORMATS, parse_shape, shape_forms
from attention_course.quiz.gift_text import escape, feedback
from attention_course.quiz.moodle_text import answer_el, question_el, value_el
from attention_course.quiz.qti_text import md
from attention_course.quiz.types.values import ValueType

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from attention_course.quiz.exports import ExportItem
    from attention_course.quiz.model import Question, Shape
    from attention_course.quiz.reading import _Reader
    from attention_course.quiz.variants import Instance


def read_shape(reader: _Reader, value: Any, qid: str) -> Shape | None:
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        return tuple(value)
    reader.problem(qid, f"a shape must be a list of non-negative integers, not {value!r}")
    return None


class ShapeType(ValueType):
    name = "shape"
    title = "shape"
    answer_format = FORMATS[name]
    value_noun = "shape"

    def read(self, reader: _Reader, raw: dict, qid: str) -> dict | None:
        found = reader.key_or_template(raw, qid)
        if found is None:
            return None
        answer, template = found
        if template is None:
            answer = read_shape(reader, answer, qid)
        return {
            "answer": answer,
            "template": template,
            "wrong_answers": reader.wrong_answers(
                raw, qid, lambda value, qid: read_shape(reader, value, qid)
            ),
        }

    def key_problem(self, question: Question, key: Any, variant: int) -> str | None:
        if isinstance(key, tuple) and all(isinstance(v, int) and v >= 0 for v in key):
            return None
        return f"shape key {key!r} is not a shape"

    def normalize(self, value: Any) -> Any:
        return tuple(int(v) for v in value)

    def parse(self, question: Question, raw: object) -> Any:
        return parse_shape(raw)

    def miss_feedback(self, value: Any, key: Any) -> list[str]:
        if len(value) != len(key):
            return [f"Your shape has {len(value)} dimensions; the answer has {len(key)}."]
        return ["Not quite."]

    def sample(self, value: Any) -> Any:
        return tuple(value)

    def made_up_wrong(self, key: Any) -> Any:
        return tuple(v + 1 for v in key)

    def invalid_answer(self, instance: Instance) -> Any:
        return "six by eight"

    def answer_example(self, question: Question) -> str | None:
        return "answer = (3, 4)"

    def selfcheck_variant(self, instance: Instance) -> dict[str, Any]:
        return {"ndim": len(instance.key)}

    def gift_answers(self, item: ExportItem, index: int) -> str:
        """Every accepted spelling of the key, then of each typical wrong answer at 0%."""
        q, inst = item.question, item.instances[index]
        lines = [f"={escape(form)}{feedback(q.explanation)}" for form in shape_forms(inst.key)]
        for w in self.distinct_wrong(inst):
            lines += [f"=%0%{escape(form)}{feedback(w.feedback)}" for form in shape_forms(w.value)]
        return "{\n" + "\n".join(lines) + "\n}"

    def qti_block(self, question: Question, instance: Instance, number: int) -> list[str]:
        """Canvas short answers are all right answers: the typical wrong answers' feedback goes
        to the question's incorrect-answer comment."""
        lines = self.qti_prompt(question, instance, number)
        note = self.wrong_answers_note(instance)
        if note:
            lines.append(f"-   {md(note)}")
        # text2qti keeps a short answer's text as written (a Markdown escape would stay in it)
        return lines + [f"*   {form}" for form in shape_forms(instance.key)]

    def moodle_question(self, item: ExportItem, index: int, title: str) -> Element:
        """A short answer, case ignored: every accepted spelling of the key at 100%, of each
        typical wrong answer at 0% with its feedback."""
        q, inst = item.question, item.instances[index]
        el = question_el("shortanswer", title, inst.prompt, q.points, q.explanation)
        value_el(el, "usecase", "0")
        for form in shape_forms(inst.key):
            answer_el(el, 1.0, form, q.explanation)
        for w in self.distinct_wrong(inst):
            for form in shape_forms(w.value):
                answer_el(el, 0.0, form, w.feedback)
        return el

    def jupyterquiz(self, item: ExportItem) -> list[dict[str, Any]]:
        q, inst = item.question, item.instances[0]
        answers = [
            {"answer": form, "correct": True, "match_case": False, "feedback": q.explanation}
            for form in shape_forms(inst.key)
        ]
        for w in self.distinct_wrong(inst):
            answers += [
                {"answer": form, "correct": False, "match_case": False, "feedback": w.feedback}
                for form in shape_forms(w.value)
            ]
        answers.append({"type": "default", "feedback": "Not quite: write the shape like (3, 4)."})
        return [{"question": inst.prompt, "type": "string", "answers": answers}]


TYPE = ShapeType()
