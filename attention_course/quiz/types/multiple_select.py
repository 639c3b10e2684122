"""Multiple select: any number of right choices, scored right picks minus wrong picks.

The partial-credit rule (docs/quiz.md): with k right choices out of n, each right pick earns
1/k and each wrong pick costs 1/(n - k), floored at 0, so that ticking every choice, or
ticking at random, earns nothing on average and ticking all of them earns exactly 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attention_course.quiz.answer_core import FORMATS, parse_multiple
from attention_course.quiz.gift_text import escape, feedback, weight
from attention_course.quiz.types.base import Put
from attention_course.quiz.types.choices import ChoiceType

if TYPE_CHECKING:
    from attention_course.quiz.exports import ExportItem
    from attention_course.quiz.model import Choice, Question
    from attention_course.quiz.reading import _Reader
    from attention_course.quiz.results import Result
    from attention_course.quiz.variants import Instance


def partial_credit(right: int, wrong: int, n_right: int, n_choices: int) -> float:
    """right/k - wrong/(n - k), floored at 0: all n choices ticked give 1 - 1 = 0.

    The right picks are among the k right choices, so this is at most 1."""
    penalty = wrong / (n_choices - n_right) if wrong else 0.0
    return max(0.0, right / n_right - penalty)


class MultipleSelect(ChoiceType):
    name = "multiple_select"
    title = "multiple select"
    answer_format = FORMATS[name]
    jupyterquiz_kind = "many_choice"

    def read(self, reader: _Reader, raw: dict, qid: str) -> dict | None:
        choices = reader.choices(raw, qid)
        if choices and not any(c.correct for c in choices):
            reader.problem(qid, "no answer: no choice is marked correct")
        return {"choices": choices}

    def key(self, question: Question, params: dict[str, Any]) -> Any:
        return frozenset(c.id for c in question.choices if c.correct)

    def parse(self, question: Question, raw: object) -> Any:
        return parse_multiple(raw, [c.id for c in question.choices])

    def check(self, instance: Instance, value: Any, text: str) -> Result:
        q = instance.question
        picked = [q.choice(cid) for cid in sorted(value)]
        right = [c for c in picked if c.correct]
        wrong = [c for c in picked if not c.correct]
        fraction = partial_credit(len(right), len(wrong), len(instance.key), len(q.choices))
        if set(value) == set(instance.key):
            return self.result(q, "correct", 1.0, [self.correct_note(q)], answer=text)
        labels = [c.misconception for c in wrong if c.misconception] or self.default_labels(q)
        feedback_ = [c.feedback for c in wrong] or ["Not quite: something is missing."]
        status = "partial" if fraction > 0 else "wrong"
        return self.result(q, status, fraction, feedback_, misconceptions=labels, answer=text)

    def correct_answer(self, instance: Instance) -> Any:
        return sorted(instance.key)

    def wrong_answer(self, instance: Instance) -> Any:
        return [next(c.id for c in instance.question.choices if not c.correct)]

    def invalid_answer(self, instance: Instance) -> Any:
        return ["a", "a"]

    def answer_example(self, question: Question) -> str | None:
        return 'answer = ["a", "c"]'

    def selfcheck_fields(self, question: Question) -> dict[str, Any]:
        n_correct = sum(c.correct for c in question.choices)
        return {**super().selfcheck_fields(question), "n_correct": n_correct}

    def selfcheck_entries(self, instance: Instance, put: Put) -> None:
        q = instance.question
        for c in q.choices:
            put(
                c.id,
                {"correct": c.correct, "feedback": c.feedback, "misconception": c.misconception},
            )
        put("all:" + self.canonical(instance.key), {"correct": True, "feedback": q.explanation})

    def gift_answers(self, item: ExportItem, index: int) -> str:
        q = item.question
        k = sum(c.correct for c in q.choices)
        wrong = max(1, len(q.choices) - k)
        lines = [
            f"~{weight(1 / k if c.correct else -1 / wrong)}{escape(c.text)}{feedback(c.feedback)}"
            for c in q.choices
        ]
        return "{\n" + "\n".join(lines) + "\n}"

    def moodle_fraction(self, choice: Choice, instance: Instance) -> float:
        """The course's rule (partial_credit) as Moodle's sum of the picked answers' fractions
        clamped to [0, 1]: +1/k for a right choice, -1/(n - k) for a wrong one, as in GIFT."""
        q = instance.question
        k = sum(c.correct for c in q.choices)
        return 1 / k if choice.correct else -1 / max(1, len(q.choices) - k)

    def qti_mark(self, letter: str, correct: bool) -> str:
        return "[*]" if correct else "[ ]"


TYPE = MultipleSelect()
