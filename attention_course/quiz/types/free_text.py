"""Free text: a few sentences, marked by hand (a keyword score guides the instructor)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attention_course.quiz import free_text
from attention_course.quiz.answer_core import FORMATS, parse_text
from attention_course.quiz.model import Idea, WrongIdea
from attention_course.quiz.moodle_text import question_el, text_el, value_el
from attention_course.quiz.results import RECORDED
from attention_course.quiz.types.base import Put, QuestionType

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from attention_course.quiz.exports import ExportItem
    from attention_course.quiz.model import Question
    from attention_course.quiz.reading import _Reader
    from attention_course.quiz.results import Result
    from attention_course.quiz.variants import Instance

UNRELATED_TEXT = "I think it is mostly about the colours of the plots and the font of the axes."


def read_ideas(reader: _Reader, raw: dict, qid: str) -> tuple[Idea, ...]:
    ideas = []
    for n, item in enumerate(raw["rubric"], 1):
        if not isinstance(item, dict):
            reader.problem(qid, f"rubric idea {n} must be a mapping")
            continue
        label = str(item.get("label", f"idea {n}"))
        phrases = reader.phrases(item.get("any"), qid, f"rubric idea {label!r} 'any'")
        together = reader.phrases(
            item.get("together"), qid, f"rubric idea {label!r} 'together'", required=False
        )
        by = reader.phrases(item.get("by"), qid, f"rubric idea {label!r} 'by'", required=False)
        points = reader.number(item.get("points", item.get("weight", 1)), qid, "idea points")
        if not phrases or points is None or points <= 0:
            continue
        if item.get("follows") and not item.get("needs"):
            reader.problem(qid, f"rubric idea {label!r} 'follows' needs a 'needs' idea")
        ideas.append(
            Idea(
                label,
                phrases,
                points,
                together,
                bool(item.get("contrast")),
                item.get("needs"),
                by,
                bool(item.get("follows")),
            )
        )
    labels = {i.label for i in ideas}
    for idea in ideas:
        if idea.needs is not None and idea.needs not in labels:
            reader.problem(qid, f"rubric idea {idea.label!r} needs {idea.needs!r}, not an idea")
    return tuple(ideas)


def read_wrong_ideas(reader: _Reader, raw: dict, qid: str) -> tuple[WrongIdea, ...]:
    wrong = []
    for n, item in enumerate(raw.get("wrong_ideas") or [], 1):
        if not isinstance(item, dict):
            reader.problem(qid, f"wrong idea {n} must be a mapping")
            continue
        label = str(item.get("label", f"wrong idea {n}"))
        phrases = reader.phrases(item.get("any"), qid, f"wrong idea {label!r} 'any'")
        unless = reader.phrases(item.get("unless"), qid, f"wrong idea {label!r} 'unless'", False)
        penalty = reader.number(item.get("penalty", 1), qid, "wrong idea penalty")
        if phrases and penalty is not None and penalty > 0:
            wrong.append(WrongIdea(label, phrases, penalty, unless))
    return tuple(wrong)


class FreeText(QuestionType):
    name = "free_text"
    title = "free text"
    answer_format = FORMATS[name]
    exports = frozenset(
        {"gift", "moodlexml", "qti", "selfcheck", "widgets"}
    )  # jupyterquiz cannot take it
    hand_graded = True

    def read(self, reader: _Reader, raw: dict, qid: str) -> dict | None:
        rubric = raw.get("rubric")
        if not isinstance(rubric, list) or not rubric:
            reader.problem(qid, "no answer: a free-text question needs a 'rubric' of key ideas")
            return None
        return {
            "rubric": read_ideas(reader, raw, qid),
            "wrong_ideas": read_wrong_ideas(reader, raw, qid),
            "sample_answer": reader.text(raw, "sample_answer", qid),
        }

    def key(self, question: Question, params: dict[str, Any]) -> Any:
        return None  # marked by hand

    def parse(self, question: Question, raw: object) -> Any:
        return parse_text(raw)

    def key_text(self, instance: Instance) -> str:
        return instance.question.sample_answer or self.canonical(instance.key)

    def check(self, instance: Instance, value: Any, text: str) -> Result:
        q = instance.question
        scored = free_text.score(q, value)
        fraction = scored.points / q.points
        review = scored.review(q.points)
        return self.result(q, "needs_review", fraction, [RECORDED], answer=text, review=review)

    def correct_answer(self, instance: Instance) -> Any:
        return instance.question.sample_answer

    def wrong_answer(self, instance: Instance) -> Any:
        return UNRELATED_TEXT

    def invalid_answer(self, instance: Instance) -> Any:
        return 42  # not text

    def answer_example(self, question: Question) -> str | None:
        return None  # answered in a markdown cell

    def notebook_note(self, question: Question) -> str:
        return "*Write your answer in the cell below (graded by hand).*"

    def selfcheck_entries(self, instance: Instance, put: Put) -> None:
        """Nothing to hash: the self-check says free text is marked by hand."""

    def gift_answers(self, item: ExportItem, index: int) -> str:
        return "{}"  # an essay, graded by hand

    def moodle_question(self, item: ExportItem, index: int, title: str) -> Element:
        """An essay, graded by hand; the grader information is the sample answer."""
        q, inst = item.question, item.instances[index]
        el = question_el("essay", title, inst.prompt, q.points, q.explanation)
        for setting, value in (
            ("responseformat", "editor"),
            ("responserequired", "1"),
            ("responsefieldlines", "10"),
            ("attachments", "0"),
        ):
            value_el(el, setting, value)
        text_el(el, "graderinfo", q.sample_answer or "", format="plain_text")
        return el

    def qti_block(self, question: Question, instance: Instance, number: int) -> list[str]:
        return [*self.qti_prompt(question, instance, number), "____"]


TYPE = FreeText()
