"""No file released to students holds an answer key in plain text."""

from __future__ import annotations

import json
import re
from typing import Any

import nbformat
import pytest

from attention_course.quiz.answer_core import canonical, format_number
from attention_course.quiz.loading import bank_files, load_bank
from attention_course.quiz.notebooks import selfcheck_notebook
from attention_course.quiz.selfcheck import build_selfcheck
from attention_course.quiz.variants import instantiate
from tests.course import BANK_DIR

QUIZZES = [p.stem for p in bank_files(BANK_DIR)]
FORBIDDEN_FIELDS = {
    "correct",
    "answer",
    "key",
    "explanation",
    "sample_answer",
    "rubric",
    "feedback",
}


def _walk(value: Any, path: str = ""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{path}/{k}")
            yield ("field", f"{path}/{k}", k)
    elif isinstance(value, list):
        for n, v in enumerate(value):
            yield from _walk(v, f"{path}/{n}")
    else:
        yield ("value", path, value)


def _plaintext(question: dict) -> str:
    """The readable parts of one self-check question (not the hashes and sealed reactions)."""
    readable = {k: v for k, v in question.items() if k not in ("variants", "groups")}
    return json.dumps(readable, ensure_ascii=False)


def _secret_texts(bank) -> list[str]:
    texts = []
    for q in bank.questions:
        texts += [q.explanation, q.sample_answer]
        texts += [c.feedback for c in q.choices]
        texts += [w.feedback for w in q.wrong_answers]
        texts += [p for g in q.rubric for p in g.phrases if len(p.split()) > 1]
    return [t for t in texts if t and len(t) > 8]


def assert_no_plaintext_key(key: dict, bank, file_text: str) -> None:
    for kind, path, item in _walk(key):
        if kind == "field":
            assert item not in FORBIDDEN_FIELDS, path
    for secret in _secret_texts(bank):
        assert secret not in file_text, secret
    by_id = {q["id"]: q for q in key["questions"]}
    for q in bank.questions:
        spec = by_id[q.id]
        assert "correct" not in json.dumps(spec.get("choices", []))
        if q.type not in ("numeric", "shape"):
            continue
        text = _plaintext(spec)
        tokens = set(re.findall(r"(?<![\w.])[0-9][0-9.]*(?!\w)", text))
        for variant in range(bank.variant_count):
            inst = instantiate(bank, q, variant)
            if q.type == "shape":
                assert canonical("shape", inst.key) not in file_text
            else:
                assert format_number(inst.key) not in tokens, (q.id, variant)


@pytest.mark.parametrize("quiz", QUIZZES)
def test_self_check_key_has_no_plaintext_answers(quiz: str) -> None:
    bank = load_bank(quiz, BANK_DIR)
    key = build_selfcheck(bank)
    assert_no_plaintext_key(key, bank, json.dumps(key, ensure_ascii=False))


@pytest.mark.parametrize("quiz", QUIZZES)
def test_widgets_notebook_has_no_plaintext_answers(quiz: str) -> None:
    bank = load_bank(quiz, BANK_DIR)
    key = build_selfcheck(bank)
    notebook = selfcheck_notebook(key)
    text = nbformat.writes(notebook)
    decoded = json.loads(
        notebook.cells[1].source.split('json.loads(r"""', 1)[1].split('""")', 1)[0]
    )
    assert decoded == key
    assert_no_plaintext_key(key, bank, text)
    assert_no_plaintext_key(key, bank, json.dumps(decoded, ensure_ascii=False))


def test_the_check_itself_finds_a_leak() -> None:
    bank = load_bank("knowledge_check", BANK_DIR)
    key = build_selfcheck(bank)
    leaky = json.loads(json.dumps(key))
    leaky["questions"][0]["choices"][1]["correct"] = True
    with pytest.raises(AssertionError):
        assert_no_plaintext_key(leaky, bank, json.dumps(leaky))
    with pytest.raises(AssertionError):
        explanation = bank.questions[0].explanation
        assert_no_plaintext_key(key, bank, json.dumps(key) + explanation)
