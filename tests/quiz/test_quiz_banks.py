"""Every bank file is valid, and every computable answer is recomputed here independently."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from attention_course.quiz import formulas
from attention_course.quiz.loading import bank_files, check_bank_file, load_bank
from attention_course.quiz.types import TYPES
from attention_course.quiz.variants import instantiate, variant_parameters
from tests import course
from tests.course import BANK_DIR

BANKS = bank_files(BANK_DIR)
COURSE_TEXT = course.COURSE_ROOT.parent / "shared" / "course-text"
WEEK15_SECTIONS = {
    "1. Queries, Keys & Values",
    "2. Scaled Dot-Product Attention, Step by Step",
    "3. Multi-Head Attention & Why Multiple Heads Help",
    "4. Self-Attention vs. Cross-Attention, and Attention Masks",
    "5. Computational Cost of Attention",
}
CONCEPT_QUESTIONS = [
    "In the library search analogy, what do the query, key, and value each correspond to?",
    "Why does scaled dot-product attention divide the raw scores by √d_k before applying softmax?",
    "How does attention directly solve the long-range dependency problem that plagued RNN-based "
    "sequence models?",
]


def _zeros(*shape: int) -> np.ndarray:
    return np.zeros(shape)


def _mha_weights_shape(p: dict) -> tuple[int, ...]:
    x = _zeros(p["seq_len"], p["d_model"])
    q = (x @ _zeros(p["d_model"], p["d_model"])).reshape(p["seq_len"], p["num_heads"], -1)
    q = q.transpose(1, 0, 2)  # (heads, seq_len, d_k)
    return np.einsum("hqd,hkd->hqk", q, q).shape


# Independent numpy computations of every formula a bank uses as a key.
REFERENCES = {
    "score_scale": lambda p: float(np.sqrt(np.float64(p["d_k"]))),
    "head_dim": lambda p: np.split(_zeros(1, p["d_model"]), p["num_heads"], axis=-1)[0].shape[-1],
    "score_matrix_growth": lambda p: (
        _zeros(7 * p["growth"], 7 * p["growth"]).size / _zeros(7, 7).size
    ),
    "mha_param_count": lambda p: sum(_zeros(p["d_model"], p["d_model"]).size for _ in "qkvo"),
    "weights_mib": lambda p: (
        np.broadcast_to(
            np.float32(0), (p["batch_size"], p["num_heads"], p["long_seq_len"], p["long_seq_len"])
        ).nbytes
        / 2**20
    ),
    "shape_q": lambda p: (
        (_zeros(p["seq_len"], p["d_model"]) @ _zeros(p["d_model"], p["d_k"])).shape
    ),
    "shape_k_transposed": lambda p: (
        (_zeros(p["seq_len"], p["d_model"]) @ _zeros(p["d_model"], p["d_k"])).T.shape
    ),
    "shape_scores": lambda p: (
        (_zeros(p["seq_len"], p["d_k"]) @ _zeros(p["seq_len"], p["d_k"]).T).shape
    ),
    "shape_output": lambda p: (
        (
            _zeros(p["seq_len"], p["seq_len"])
            @ _zeros(p["seq_len"], p["d_model"])
            @ _zeros(p["d_model"], p["d_v"])
        ).shape
    ),
    "shape_per_head_weights": _mha_weights_shape,
}


@pytest.mark.parametrize("path", BANKS, ids=lambda p: p.name)
def test_bank_file_is_valid(path: Path) -> None:
    bank, problems = check_bank_file(path)
    assert problems == []
    assert bank.quiz == path.stem
    assert len({q.id for q in bank.questions}) == len(bank.questions)


def test_the_three_banks_exist() -> None:
    assert {p.stem for p in BANKS} >= {"knowledge_check", "concept_check", "misconceptions"}


@pytest.mark.parametrize("path", BANKS, ids=lambda p: p.name)
def test_every_templated_answer_recomputed_with_numpy(path: Path) -> None:
    bank = load_bank(str(path), BANK_DIR)
    for q in bank.questions:
        if not q.templated:
            continue
        assert q.template in REFERENCES, f"add a numpy reference for formula {q.template}"
        for variant in range(bank.variant_count):
            inst = instantiate(bank, q, variant)
            expected = REFERENCES[q.template](variant_parameters(bank, variant))
            if q.type == "shape":
                assert inst.key == tuple(expected)
            else:
                assert math.isclose(inst.key, expected, rel_tol=1e-12), (q.id, variant)


@pytest.mark.parametrize("path", BANKS, ids=lambda p: p.name)
def test_typical_wrong_answers_differ_from_the_key(path: Path) -> None:
    bank = load_bank(str(path), BANK_DIR)
    for q in bank.questions:
        for variant in range(bank.variant_count):
            inst = instantiate(bank, q, variant)
            for wrong in inst.wrong_answers:
                if q.type == "numeric":
                    assert not q.tolerance.accepts(wrong.value, inst.key)
                else:
                    assert wrong.value != inst.key


def test_templated_questions_are_not_typed_numbers() -> None:
    for path in BANKS:
        bank = load_bank(str(path), BANK_DIR)
        for q in bank.questions:
            if q.type in ("numeric", "shape") and bank.parameters:
                assert q.templated and q.answer is None, q.id
                assert q.template in formulas.FORMULAS


def test_knowledge_check_is_the_texts_four_quick_questions() -> None:
    """Week 15's knowledge check is "four quick questions": one each on queries/keys/values,
    the steps of attention, why several heads help, and why masks use -inf."""
    bank = load_bank("knowledge_check", BANK_DIR)
    assert len(bank.questions) == 4
    assert set(bank.sections.values()) <= WEEK15_SECTIONS
    assert [q.section for q in bank.questions] == ["qkv", "sdpa", "multihead", "masks"]
    mask = bank.question("mask_inf")
    assert "-inf" in mask.prompt and "exactly 0" in next(c.text for c in mask.choices if c.correct)
    assert "heads" in bank.question("why_heads").prompt


def test_practice_keeps_the_other_questions_and_asks_the_history() -> None:
    bank = load_bank("practice", BANK_DIR)
    ids = {q.id for q in bank.questions}
    assert {"sdpa_scale", "head_width", "cross_attention_sources", "cost_growth"} <= ids
    assert bank.question("history").section == "history"
    week15 = {s for q in bank.questions for s in [bank.sections[q.section]]} & WEEK15_SECTIONS
    assert "5. Computational Cost of Attention" in week15


def test_concept_check_has_the_chapter_questions_worded_as_given() -> None:
    bank = load_bank("concept_check", BANK_DIR)
    prompts = [" ".join(q.prompt.split()) for q in bank.questions]
    assert prompts == CONCEPT_QUESTIONS
    assert [q.type for q in bank.questions] == ["matching", "single_choice", "free_text"]


def test_misconception_questions_cover_the_issue_topics() -> None:
    bank = load_bank("misconceptions", BANK_DIR)
    ids = {q.id for q in bank.questions}
    assert {"mask_convention", "fully_masked_row", "per_head_weights", "mha_params"} <= ids
    assert {"weights_memory", "shape_q", "shape_kt", "shape_scores", "shape_output"} <= ids
    mask = bank.question("mask_convention")
    right = next(c for c in mask.choices if c.correct)
    assert "~mask" in right.text  # True = take part in torch's scaled_dot_product_attention


def test_all_question_types_are_used() -> None:
    types = {q.type for path in BANKS for q in load_bank(str(path), BANK_DIR).questions}
    assert types == set(TYPES)


@pytest.mark.parametrize("path", BANKS, ids=lambda p: p.name)
def test_section_titles_are_in_the_course_text(path: Path) -> None:
    bank = load_bank(str(path), BANK_DIR)
    files = [COURSE_TEXT / name.strip() for name in bank.source.split(",")]  # one or more texts
    if not all(f.exists() for f in files):
        if os.environ.get("CI") == "true":  # CI's clone always has shared/ beside it
            pytest.fail(f"course text {files} not available (../shared/ is missing)")
        pytest.skip(f"course text {files} not available (a clone without ../shared/)")
    text = "\n".join(f.read_text(encoding="utf-8") for f in files)
    for title in bank.sections.values():
        assert title in text
