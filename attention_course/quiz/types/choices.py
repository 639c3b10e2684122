"""What single-choice and multiple-select questions share: choices, and how they are shown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attention_course.quiz.moodle_text import answer_el, question_el, value_el
from attention_course.quiz.qti_text import md
from attention_course.quiz.types.base import QuestionType

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from attention_course.quiz.exports import ExportItem
    from attention_course.quiz.model import Choice, Question
    from attention_course.quiz.variants import Instance

LETTERS = "abcdefghijklmnopqrstuvwxyz"


class ChoiceType(QuestionType):
    """A question answered by picking among its choices."""

    exports = frozenset({"gift", "moodlexml", "qti", "jupyterquiz", "selfcheck", "widgets"})
    jupyterquiz_kind = ""

    def is_correct(self, choice: Choice, instance: Instance) -> bool:
        return choice.correct

    def selfcheck_fields(self, question: Question) -> dict[str, Any]:
        return {
            "choices": [{"id": c.id, "text": c.text} for c in question.choices],
            "choice_ids": [c.id for c in question.choices],
        }

    def qti_mark(self, letter: str, correct: bool) -> str:
        raise NotImplementedError

    def qti_note(self, question: Question, choice: Choice, correct: bool) -> str:
        return choice.feedback

    def qti_block(self, question: Question, instance: Instance, number: int) -> list[str]:
        lines = self.qti_prompt(question, instance, number)
        for letter, c in zip(LETTERS, question.choices, strict=False):
            correct = self.is_correct(c, instance)
            lines.append(f"{self.qti_mark(letter, correct)} {md(c.text)}")
            note = self.qti_note(question, c, correct)
            if note:
                lines.append(f"... {md(note)}")
        return lines

    def jupyterquiz(self, item: ExportItem) -> list[dict[str, Any]]:
        q, inst = item.question, item.instances[0]
        answers = []
        for c in q.choices:
            correct = self.is_correct(c, inst)
            feedback = c.feedback or (q.explanation if correct else "Not quite.")
            answers.append(
                {"answer": c.text, "correct": correct, "feedback": feedback or "Correct."}
            )
        return [{"question": inst.prompt, "type": self.jupyterquiz_kind, "answers": answers}]

    def moodle_fraction(self, choice: Choice, instance: Instance) -> float:
        """The share of the points a choice earns in Moodle (its answer's fraction)."""
        raise NotImplementedError

    def moodle_question(self, item: ExportItem, index: int, title: str) -> Element:
        q, inst = item.question, item.instances[index]
        el = question_el("multichoice", title, inst.prompt, q.points, q.explanation)
        single = self.jupyterquiz_kind == "multiple_choice"
        value_el(el, "single", "true" if single else "false")
        value_el(el, "shuffleanswers", "0")
        value_el(el, "answernumbering", "abc")
        for c in q.choices:
            answer_el(el, self.moodle_fraction(c, inst), c.text, c.feedback)
        return el
