"""Single choice: exactly one choice is right."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attention_course.quiz.answer_core import FORMATS, parse_single
from attention_course.quiz.gift_text import escape, feedback
from attention_course.quiz.qti_text import md
from attention_course.quiz.types.base import Put
from attention_course.quiz.types.choices import ChoiceType

if TYPE_CHECKING:
    from attention_course.quiz.exports import ExportItem
    from attention_course.quiz.model import Choice, Question
    from attention_course.quiz.reading import _Reader
    from attention_course.quiz.results import Result
    from attention_course.quiz.variants import Instance


class SingleChoice(ChoiceType):
    name = "single_choice"
    title = "single choice"
    answer_format = FORMATS[name]
    jupyterquiz_kind = "multiple_choice"

    def read(self, reader: _Reader, raw: dict, qid: str) -> dict | None:
        choices = reader.choices(raw, qid)
        n_correct = sum(c.correct for c in choices)
        if choices and n_correct != 1:
            reason = "no answer: no choice is marked correct" if n_correct == 0 else "more than one"
            reader.problem(qid, f"{reason} (a single-choice question needs exactly one)")
        return {"choices": choices}

    def key(self, question: Question, params: dict[str, Any]) -> Any:
        return next(c.id for c in question.choices if c.correct)

    def is_correct(self, choice: Choice, instance: Instance) -> bool:
        return choice.id == instance.key

    def parse(self, question: Question, raw: object) -> Any:
        return parse_single(raw, [c.id for c in question.choices])

    def check(self, instance: Instance, value: Any, text: str) -> Result:
        q = instance.question
        choice = q.choice(value)
        if value == instance.key:
            return self.result(
                q, "correct", 1.0, [choice.feedback, self.correct_note(q)], answer=text
            )
        labels = [choice.misconception] if choice.misconception else self.default_labels(q)
        feedback_ = [choice.feedback or "Not quite."]
        return self.result(q, "wrong", 0.0, feedback_, misconceptions=labels, answer=text)

    def correct_answer(self, instance: Instance) -> Any:
        return instance.key

    def wrong_answer(self, instance: Instance) -> Any:
        return next(c.id for c in instance.question.choices if not c.correct)

    def invalid_answer(self, instance: Instance) -> Any:
        return "the second one"

    def answer_example(self, question: Question) -> str | None:
        return 'answer = "b"'

    def selfcheck_entries(self, instance: Instance, put: Put) -> None:
        q = instance.question
        for c in q.choices:
            ok = c.id == instance.key
            put(
                c.id,
                {
                    "correct": ok,
                    "feedback": _join(c.feedback, q.explanation) if ok else c.feedback,
                    "misconception": None if ok else (c.misconception or q.misconception),
                },
            )

    def gift_answers(self, item: ExportItem, index: int) -> str:
        q, inst = item.question, item.instances[index]
        lines = [
            f"{'=' if c.id == inst.key else '~'}{escape(c.text)}{feedback(c.feedback)}"
            for c in q.choices
        ]
        return "{\n" + "\n".join(lines) + "\n}"

    def moodle_fraction(self, choice: Choice, instance: Instance) -> float:
        return 1.0 if choice.id == instance.key else 0.0

    @staticmethod
    def qti_prompt(question: Question, instance: Instance, number: int) -> list[str]:
        return [f"{number}.  {md(instance.prompt)}"]  # the explanation goes with the right choice

    def qti_mark(self, letter: str, correct: bool) -> str:
        return f"*{letter})" if correct else f"{letter}) "

    def qti_note(self, question: Question, choice: Choice, correct: bool) -> str:
        return " ".join(p for p in (choice.feedback, question.explanation if correct else "") if p)


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


TYPE = SingleChoice()
