"""A bug in a helper pasted into masks_and_heads is named as the helper's and costs no points
twice: the functions that call it are graded with the course's helpers as well."""

from __future__ import annotations

import pytest

from attention_course.grading.feedback import cell_feedback
from tests.conftest import grade_reference_variants
from tests.course import ASSIGNMENTS

HELPER_TEST = "test_same_with_your_pasted_helpers"
USERS = ("self_attention", "cross_attention", "multi_head_attention")

# Each variant: the instructor's masks_and_heads (the reference) with one pasted helper replaced
# by a classic mistake: (code, helper named, words of the advice, functions whose tests it breaks)
BUGS = {
    "sdpa_no_scaling": (
        """
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
""",
        "scaled_dot_product_attention",
        "does not divide the scores by sqrt(d_k)",  # the misconception's words
        USERS,
    ),
    "causal_mask_tril": (
        """
def causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len))).astype(bool)
""",
        "causal_mask",
        "strictly above the diagonal",
        ("self_attention",),
    ),
    "softmax_course_text": (
        """
def softmax(x, axis=-1):
    exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)
""",
        "softmax",
        "all -inf",
        # their tests include fully masked queries (a read-only mask, a masked head)
        ("cross_attention", "multi_head_attention"),
    ),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    variants = {k: ("masks_and_heads", None, code) for k, (code, *_) in BUGS.items()}
    variants["correct"] = ("masks_and_heads", None, "")
    return grade_reference_variants(tmp_path_factory.mktemp("helpers"), variants)


def test_correct_helpers_pass_the_helper_test(graded):
    report = graded["correct"]
    for function in USERS:
        tests = {t.test: t for t in report.functions[function].tests}
        assert tests[HELPER_TEST].passed and tests[HELPER_TEST].points == 0


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_helper_bug_is_named_and_costs_no_points_twice(graded, bug):
    _, helper, advice, broken = BUGS[bug]
    report = graded[bug]
    assert not report.cell_errors, report.cell_errors
    for function in ASSIGNMENTS["masks_and_heads"].graded:
        fs = report.functions[function]
        # The helper was graded in attention_basics: here it costs nothing.
        assert fs.score == fs.max_score, fs.feedback()
        if function not in USERS:
            continue
        helper_test = next(t for t in fs.tests if t.test == HELPER_TEST)
        assert not helper_test.passed, f"{function}: the helper bug is not named"
        assert f"your pasted {helper}:" in helper_test.message
        assert f"your pasted {helper}:" in cell_feedback(report, function)  # what nbgrader shows
        assert advice in helper_test.message
        assert "attention_basics" in fs.feedback() or function not in broken
        if function in broken:
            # it names the tests that pass only with the course's helpers
            assert "with yours they fail:" in helper_test.message, helper_test.message
        else:
            assert "changes none of" in helper_test.message, helper_test.message


# A hostile student who learns from the second run: a self_attention that raises, and computes
# correctly only when it can tell the second run from the first. Each must score exactly what
# the same raising self_attention scores without the trick.
UNSCALED_SDPA = BUGS["sdpa_no_scaling"][0]
RAISING = """
_right_self_attention = self_attention
def self_attention(X, W_q, W_k, W_v, causal=False):
    if not _second_run():
        raise RuntimeError("wrong on purpose")
    return _right_self_attention(X, W_q, W_k, W_v, causal)
"""
TRICKS = {
    # an audit hook watches what is compiled after the student's cells: the course's helpers,
    # were their source pasted, would show a line the student guesses of the reference
    "guesses_a_reference_line": UNSCALED_SDPA
    + """
import sys
_compiled = []
sys.addaudithook(
    lambda event, args: _compiled.append(str(args[0])) if event == "compile" else None
)
def _second_run():
    return any("/ np.sqrt(d_k)" in s or "def softmax" in s for s in _compiled)
"""
    + RAISING,
    # the helpers are not the student's own in the second run: its helpers are right, so the
    # second run proves nothing about them
    "detects_the_second_run": """
_own_softmax, _own_sdpa = softmax, scaled_dot_product_attention
def _second_run():
    return softmax is not _own_softmax or scaled_dot_product_attention is not _own_sdpa
"""
    + RAISING,
    "plain_raising": "def _second_run():\n    return False\n" + RAISING,
    "plain_raising_unscaled_sdpa": UNSCALED_SDPA
    + "def _second_run():\n    return False\n"
    + RAISING,
}


@pytest.fixture(scope="module")
def tricks(tmp_path_factory):
    variants = {k: ("masks_and_heads", ["self_attention"], code) for k, code in TRICKS.items()}
    return grade_reference_variants(tmp_path_factory.mktemp("tricks"), variants)


@pytest.mark.parametrize(
    "trick, plain",
    [
        ("guesses_a_reference_line", "plain_raising_unscaled_sdpa"),
        ("detects_the_second_run", "plain_raising"),
    ],
)
def test_telling_the_second_run_apart_gains_nothing(tricks, trick, plain):
    forged = tricks[trick].functions["self_attention"]
    honest = tricks[plain].functions["self_attention"]
    assert [t.passed for t in forged.tests] == [t.passed for t in honest.tests]
    assert forged.score == honest.score < honest.max_score
    assert not tricks[trick].cell_errors
