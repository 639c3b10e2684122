"""The question-type registry: every type is used and complete, and one module makes a type."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from pygiftparser import parser as gift_parser

from attention_course import settings
from attention_course.quiz import types
from attention_course.quiz.answer_core import InvalidAnswer
from attention_course.quiz.checking import grade
from attention_course.quiz.export_gift import to_gift
from attention_course.quiz.export_jupyterquiz import to_jupyterquiz
from attention_course.quiz.export_qti import to_qti_zip, to_text2qti
from attention_course.quiz.exports import export_items, left_out
from attention_course.quiz.gift_text import escape
from attention_course.quiz.loading import bank_files, load_bank
from attention_course.quiz.notebooks import WIDGETS_UI, graded_notebook
from attention_course.quiz.reading import read_bank
from attention_course.quiz.samples import correct_answer, invalid_answer, wrong_answer
from attention_course.quiz.selfcheck import build_selfcheck
from attention_course.quiz.types.base import EXPORT_OPERATIONS, OPERATIONS, QuestionType
from attention_course.quiz.validation import semantic_problems
from attention_course.quiz.variants import instantiate
from tests.course import BANK_DIR

PACKAGE = Path(types.__file__).parent.parent.parent
# Implemented by every type (the other operations have defaults in QuestionType).
REQUIRED = ("read", "key", "parse", "check", "correct_answer", "wrong_answer", "invalid_answer")
REQUIRED += ("answer_example",)


def _overrides(qtype: QuestionType, operation: str) -> bool:
    return getattr(type(qtype), operation) is not getattr(QuestionType, operation)


def test_every_registered_type_is_used_by_a_bank_question() -> None:
    used = {
        q.type for path in bank_files(BANK_DIR) for q in load_bank(str(path), BANK_DIR).questions
    }
    assert set(types.TYPES) <= used


@pytest.mark.parametrize("name", list(types.TYPES))
def test_every_type_implements_every_operation(name: str) -> None:
    qtype = types.get(name)
    assert qtype.name == name and qtype.title and qtype.answer_format
    assert all(callable(getattr(qtype, op, None)) for op in OPERATIONS)
    assert [op for op in REQUIRED if not _overrides(qtype, op)] == []
    assert qtype.exports <= set(settings.EXPORT_FORMATS)
    for fmt in qtype.exports:
        assert _overrides(qtype, EXPORT_OPERATIONS[fmt]), f"{name} lists {fmt} but cannot"


def _generic_source(path: Path) -> str:
    """A module's source without the student-side code that notebooks embed verbatim."""
    if path.name == "answer_core.py":
        return ""
    return path.read_text(encoding="utf-8").replace(WIDGETS_UI, "")


def test_no_generic_module_branches_on_a_question_type() -> None:
    """Only the types modules (and the embedded student-side checker) know type names."""
    branch = re.compile(r"(\.|\bq)type\s*(==|!=|in\s*\()|\[.type.\]\s*==")
    found = [
        f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for path in sorted(PACKAGE.joinpath("attention_course").rglob("*.py"))
        if "types" not in path.relative_to(PACKAGE).parts
        for n, line in enumerate(_generic_source(path).splitlines(), 1)
        if branch.search(line)
    ]
    assert found == []


def test_unknown_types_are_listed_in_the_problem() -> None:
    bank, problems = read_bank(Path("made_up.yaml"), _bank_data({"id": "q", "type": "essay"}))
    assert bank.questions == ()
    assert f"unknown type 'essay' (known: {', '.join(types.TYPES)})" in str(problems[0])
    assert types.get(["not", "hashable"]) is None


# --- a made-up type: one module is enough -------------------------------------------------------


class YesNo(QuestionType):
    """Yes or no, with the key in ``answer: true`` (or false); GIFT and jupyterquiz only."""

    name = "yes_no"
    title = "yes/no"
    answer_format = 'yes or no, for example "yes"'
    exports = frozenset({"gift", "jupyterquiz"})

    def read(self, reader: Any, raw: dict, qid: str) -> dict | None:
        if not isinstance(raw.get("answer"), bool):
            reader.problem(qid, "no answer: 'answer' must be true or false")
            return None
        return {"answer": raw["answer"]}

    def key(self, question: Any, params: dict[str, Any]) -> Any:
        return question.answer

    def parse(self, question: Any, raw: object) -> Any:
        text = str(raw).strip().casefold()
        if text not in ("yes", "no"):
            raise InvalidAnswer(f"{raw!r} is not yes or no; expected {self.answer_format}")
        return text == "yes"

    def canonical(self, value: Any) -> str:
        return "yes" if value else "no"

    def check(self, instance: Any, value: Any, text: str) -> Any:
        q = instance.question
        if value == instance.key:
            return self.result(q, "correct", 1.0, [self.correct_note(q)], answer=text)
        return self.result(q, "wrong", 0.0, ["Not quite."], answer=text)

    def correct_answer(self, instance: Any) -> Any:
        return self.canonical(instance.key)

    def wrong_answer(self, instance: Any) -> Any:
        return self.canonical(not instance.key)

    def invalid_answer(self, instance: Any) -> Any:
        return "maybe"

    def answer_example(self, question: Any) -> str | None:
        return 'answer = "yes"'

    def gift_answers(self, item: Any, index: int) -> str:
        return "{T}" if item.instances[index].key else "{F}"

    def jupyterquiz(self, item: Any) -> list[dict[str, Any]]:
        inst = item.instances[0]
        answers = [
            {"answer": text, "correct": value == inst.key, "feedback": "Correct."}
            for text, value in (("yes", True), ("no", False))
        ]
        return [{"question": inst.prompt, "type": "multiple_choice", "answers": answers}]


def _bank_data(*questions: dict) -> dict:
    common = {"section": "s1", "prompt": "A prompt?"}
    return {
        "quiz": "made_up",
        "title": "Made up",
        "source": "these tests",
        "sections": {"s1": "1. Attention"},
        "questions": [{**common, **q} for q in questions],
    }


@pytest.fixture
def yes_no():
    qtype = types.register(YesNo())
    yield qtype
    types.unregister(qtype.name)


@pytest.fixture
def bank(yes_no):
    data = _bank_data(
        {"id": "scaled", "type": "yes_no", "answer": True, "explanation": "By 1/sqrt(d_k)."},
        {"id": "pick", "type": "single_choice", "choices": [
            {"id": "a", "text": "one", "correct": True}, {"id": "b", "text": "two"}]},
    )  # fmt: skip
    bank, problems = read_bank(Path("made_up.yaml"), data)
    assert problems == [] and semantic_problems(bank) == []
    return bank


def test_a_registered_type_is_read_and_validated(yes_no, bank) -> None:
    question = bank.question("scaled")
    assert question.type == "yes_no" and question.answer is True
    data = _bank_data({"id": "broken", "type": "yes_no"})
    _, problems = read_bank(Path("made_up.yaml"), data)
    assert [p.reason for p in problems] == ["no answer: 'answer' must be true or false"]


def test_a_registered_type_is_checked(bank) -> None:
    inst = instantiate(bank, bank.question("scaled"), 0)
    right, wrong = grade(inst, correct_answer(inst)), grade(inst, wrong_answer(inst))
    assert (right.status, right.score, right.feedback) == ("correct", 1.0, ["By 1/sqrt(d_k)."])
    assert (wrong.status, wrong.score, wrong.answer) == ("wrong", 0.0, "no")
    invalid = grade(inst, invalid_answer(inst))
    assert invalid.status == "invalid" and "expected yes or no" in invalid.feedback[0]
    assert grade(inst, "  ").status == "unanswered"


def test_a_registered_type_is_exported_where_it_says(bank) -> None:
    items = export_items(bank, variants=1)
    gift = to_gift(bank, items)
    assert f"::{escape('made_up/scaled')}::[plain]A prompt? {{T}}" in gift
    parsed = gift_parser.parseFile(io.StringIO(gift))
    assert len(parsed) == 2 and all(q.valid for q in parsed)
    questions, notes = to_jupyterquiz(bank, items)
    assert [q["type"] for q in questions] == ["multiple_choice", "multiple_choice"] and not notes
    # the formats it does not list leave it out, and say so
    assert "scaled" not in to_text2qti(bank, items) and to_qti_zip(bank, items)
    assert [q["id"] for q in build_selfcheck(bank)["questions"]] == ["pick"]
    for fmt in ("qti", "selfcheck", "widgets"):
        assert left_out(bank, fmt) == [f"scaled: yes/no is not supported by {fmt}, left out"]
    assert left_out(bank, "gift") == []


def test_a_registered_type_goes_into_the_graded_notebook(bank) -> None:
    cells = graded_notebook([bank]).cells
    sources = "\n".join(cell.source for cell in cells)
    assert 'like: answer = "yes"' in sources
    assert '*Answer format: yes or no, for example "yes".*' in sources
