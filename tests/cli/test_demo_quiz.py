"""The demo class's knowledge-check responses grade as their authors intended."""

from __future__ import annotations

import pytest

from attention_course.cli.samples import write_quiz_responses
from attention_course.quiz.grading import grade_responses
from attention_course.quiz.loading import load_bank
from attention_course.quiz.responses import read_responses
from tests.course import BANK_DIR, COURSE_ROOT


def test_sample_quiz_responses_grade_as_intended(tmp_path):
    bank = load_bank("knowledge_check", BANK_DIR)
    paths = {p.stem: p for p in write_quiz_responses(COURSE_ROOT, tmp_path)}
    totals = {
        s: grade_responses(bank, read_responses(p, bank)).total
        for s, p in paths.items()
        if s != "demo-broken"
    }
    assert totals["demo-instructor"] == bank.max_score
    assert 0 < totals["demo-partial"] < bank.max_score
    assert totals["demo-stub"] == 0 and totals["demo-hostile"] == 0
    with pytest.raises(ValueError, match="invalid JSON"):
        read_responses(paths["demo-broken"], bank)
