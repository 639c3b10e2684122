"""What every question type provides: the operations the generic quiz modules call."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attention_course.quiz.answer_core import canonical
from attention_course.quiz.qti_text import md
from attention_course.quiz.results import Result

if TYPE_CHECKING:  # the generic modules import the registry, so these only name types
    from xml.etree.ElementTree import Element

    from attention_course.quiz.exports import ExportItem
    from attention_course.quiz.model import Question
    from attention_course.quiz.reading import _Reader
    from attention_course.quiz.variants import Instance

# Every operation a type implements (the tests check that each type has them all).
OPERATIONS = (
    "read",
    "key",
    "normalize",
    "matches",
    "key_problem",
    "parse",
    "canonical",
    "key_text",
    "check",
    "correct_answer",
    "wrong_answer",
    "invalid_answer",
    "answer_example",
    "notebook_note",
    "selfcheck_fields",
    "selfcheck_variant",
    "selfcheck_entries",
    "gift_answers",
    "qti_block",
    "qti_item",
    "jupyterquiz",
    "moodle_question",
)

# What an export format calls; a type lists in ``exports`` the formats it can go to.
EXPORT_OPERATIONS = {
    "gift": "gift_answers",
    "moodlexml": "moodle_question",
    "qti": "qti_block",
    "jupyterquiz": "jupyterquiz",
    "selfcheck": "selfcheck_entries",
    "widgets": "selfcheck_entries",
}

# put(answer, payload, overwrite=True): store a self-check reaction under an answer's hash
Put = Callable[..., None]


class Unsupported(NotImplementedError):
    """The type cannot be exported to this format (it is not in the type's ``exports``)."""


class QuestionType:
    """A question type: how its questions are read, keyed, checked, sampled and exported.

    Subclasses set the class attributes and implement the methods that raise
    NotImplementedError; the others have defaults that fit most types."""

    name: str = ""  # the bank's ``type:`` value
    title: str = ""  # the type in messages ("free text")
    answer_format: str = ""  # what a student writes, shown in prompts and invalid-answer messages
    exports: frozenset[str] = frozenset()  # the formats (settings.EXPORT_FORMATS) it can go to
    hand_graded: bool = False  # marked by hand: a markdown answer cell, a "needs_review" result
    value_noun: str = "number"  # what a templated key is, in item analysis ("another wrong ...")

    def __repr__(self) -> str:
        return f"<question type {self.name}>"

    # -- reading the bank ----------------------------------------------------------------------

    def read(self, reader: _Reader, raw: dict, qid: str) -> dict | None:
        """The type's fields of a :class:`Question` from bank data, problems noted in reader."""
        raise NotImplementedError

    def key_problem(self, question: Question, key: Any, variant: int) -> str | None:
        """Why the key computed for ``variant`` is not a key of this type (None: it is)."""
        return None

    # -- variants ------------------------------------------------------------------------------

    def key(self, question: Question, params: dict[str, Any]) -> Any:
        """The key of the variant with these parameter values."""
        raise NotImplementedError

    def normalize(self, value: Any) -> Any:
        """A typical wrong answer's value (fixed or computed) as an answer of this type."""
        return value

    def matches(self, question: Question, given: Any, target: Any) -> bool:
        """Whether the read answer ``given`` counts as ``target`` (the key or a wrong answer)."""
        return given == target

    # -- answers -------------------------------------------------------------------------------

    def parse(self, question: Question, raw: object) -> Any:
        """``raw`` as the student wrote it, read; raises answer_core.InvalidAnswer."""
        raise NotImplementedError

    def canonical(self, value: Any) -> str:
        """One text per distinct answer: what item analysis counts and self-check hashes."""
        return canonical(self.name, value)

    def key_text(self, instance: Instance) -> str:
        """The key as shown to the instructor (``quiz show --key``)."""
        return self.canonical(instance.key)

    def check(self, instance: Instance, value: Any, text: str) -> Result:
        """Grade a read answer ``value`` (canonical ``text``) against the instance's key."""
        raise NotImplementedError

    @staticmethod
    def result(
        question: Question, status: str, fraction: float, feedback: list[str], **kw: Any
    ) -> Result:
        """A :class:`Result` of ``question`` (empty feedback lines dropped)."""
        return Result(
            question.id, status, fraction, question.points, [f for f in feedback if f], **kw
        )

    @staticmethod
    def correct_note(question: Question) -> str:
        return question.explanation or "Correct."

    @staticmethod
    def default_labels(question: Question) -> list[str]:
        return [question.misconception] if question.misconception else []

    # -- sample answers ------------------------------------------------------------------------

    def correct_answer(self, instance: Instance) -> Any:
        """A right answer, as a student would write it."""
        raise NotImplementedError

    def wrong_answer(self, instance: Instance) -> Any:
        """A well-formed answer that earns nothing (a typical mistake where the bank has one)."""
        raise NotImplementedError

    def invalid_answer(self, instance: Instance) -> Any:
        """An answer in the wrong format for this type."""
        raise NotImplementedError

    # -- the graded notebook -------------------------------------------------------------------

    def answer_example(self, question: Question) -> str | None:
        """The example in the answer cell (``answer = ...``); None when hand graded."""
        raise NotImplementedError

    def notebook_note(self, question: Question) -> str:
        """The last line of the question's markdown cell: how to answer."""
        return f"*Answer format: {self.answer_format}.*"

    # -- self-check keys -----------------------------------------------------------------------

    def selfcheck_fields(self, question: Question) -> dict[str, Any]:
        """What the student-side checker needs besides id, type, prompt and format."""
        return {}

    def selfcheck_variant(self, instance: Instance) -> dict[str, Any]:
        """Fields of the self-check question that depend on the variant."""
        return {}

    def selfcheck_entries(self, instance: Instance, put: Put) -> None:
        """``put`` every answer that earns a reaction, with that reaction."""
        raise Unsupported(f"{self.title} questions have no self-check")

    # -- exports -------------------------------------------------------------------------------

    def gift_answers(self, item: ExportItem, index: int) -> str:
        """The GIFT answer block (``{...}``) of the item's ``index``-th variant."""
        raise Unsupported(f"{self.title} questions cannot be exported to GIFT")

    def qti_block(self, question: Question, instance: Instance, number: int) -> list[str]:
        """The text2qti lines of one variant, from its numbered prompt on."""
        raise Unsupported(f"{self.title} questions cannot be exported to QTI")

    @staticmethod
    def qti_prompt(question: Question, instance: Instance, number: int) -> list[str]:
        """The numbered prompt and the general feedback (the explanation) in text2qti."""
        lines = [f"{number}.  {md(instance.prompt)}"]
        return lines + ([f"+   {md(question.explanation)}"] if question.explanation else [])

    def qti_item(self, question: Question, instance: Instance, ident: str) -> Element | None:
        """A QTI item that replaces the one text2qti wrote (None: keep text2qti's)."""
        return None

    def jupyterquiz(self, item: ExportItem) -> list[dict[str, Any]]:
        """The jupyterquiz questions of the item's (first) variant."""
        raise Unsupported(f"{self.title} questions cannot be exported to jupyterquiz")

    def moodle_question(self, item: ExportItem, index: int, title: str) -> Element:
        """The Moodle XML ``<question>`` of the item's ``index``-th variant."""
        raise Unsupported(f"{self.title} questions cannot be exported to Moodle XML")
