"""What numeric and shape questions share: a key given or computed, typical wrong values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attention_course.quiz import formulas
from attention_course.quiz.types.base import Put, QuestionType

if TYPE_CHECKING:
    from attention_course.quiz.model import Question
    from attention_course.quiz.results import Result
    from attention_course.quiz.variants import Instance


class ValueType(QuestionType):
    """A question whose key is one value: given (``answer``) or computed (``template``)."""

    exports = frozenset({"gift", "moodlexml", "qti", "jupyterquiz", "selfcheck", "widgets"})

    def key(self, question: Question, params: dict[str, Any]) -> Any:
        if question.template is not None:  # question.templated
            return self.normalize(formulas.evaluate(question.template, params))
        return self.normalize(question.answer)

    def check(self, instance: Instance, value: Any, text: str) -> Result:
        q = instance.question
        if self.matches(q, value, instance.key):
            return self.result(q, "correct", 1.0, [self.correct_note(q)], answer=text)
        for reaction in instance.wrong_answers:
            if self.matches(q, value, reaction.value):
                labels = [reaction.misconception] if reaction.misconception else None
                labels = labels or self.default_labels(q)
                feedback = [reaction.feedback or "Not quite."]
                return self.result(q, "wrong", 0.0, feedback, misconceptions=labels, answer=text)
        feedback = self.miss_feedback(value, instance.key)
        return self.result(
            q, "wrong", 0.0, feedback, misconceptions=self.default_labels(q), answer=text
        )

    def miss_feedback(self, value: Any, key: Any) -> list[str]:
        """What an answer that is neither the key nor a typical wrong answer is told."""
        return ["Not quite."]

    def sample(self, value: Any) -> Any:
        """A value as a student would write it."""
        raise NotImplementedError

    def made_up_wrong(self, key: Any) -> Any:
        """A wrong value when the bank gives no typical wrong answer."""
        raise NotImplementedError

    def correct_answer(self, instance: Instance) -> Any:
        return self.sample(instance.key)

    def wrong_answer(self, instance: Instance) -> Any:
        if instance.wrong_answers:
            return self.sample(instance.wrong_answers[0].value)
        return self.sample(self.made_up_wrong(instance.key))

    def show(self, value: Any) -> str:
        """A value as the exports write it in feedback."""
        return self.canonical(value)

    def distinct_wrong(self, instance: Instance) -> list[Any]:
        """The typical wrong answers that the checker can reach: the first of each value (the
        checker stops at the first that matches), none that the key already takes. Exports keep
        their order, so that the first that matches decides there too."""
        q, out = instance.question, list[Any]()
        for w in instance.wrong_answers:
            if self.matches(q, w.value, instance.key):
                continue
            if all(w.value != seen.value for seen in out):
                out.append(w)
        return out

    def wrong_answers_note(self, instance: Instance) -> str:
        """Every typical wrong answer's feedback in one comment ("If you answered X: ..."), for
        formats whose answers can only be right ones (Canvas numerical and short answer)."""
        return " ".join(
            f"If you answered {self.show(w.value)}: {w.feedback}"
            for w in self.distinct_wrong(instance)
            if w.feedback
        )

    def selfcheck_forms(self, question: Question, value: Any) -> list[str]:
        """The hashed forms of a value: every answer text the self-check takes for it."""
        return [self.canonical(value)]

    def selfcheck_entries(self, instance: Instance, put: Put) -> None:
        q = instance.question
        for answer in self.selfcheck_forms(q, instance.key):
            put(answer, {"correct": True, "feedback": q.explanation})
        for w in instance.wrong_answers:
            payload = {"feedback": w.feedback, "misconception": w.misconception or q.misconception}
            for answer in self.selfcheck_forms(q, w.value):
                put(answer, payload, overwrite=False)
