"""Grader for attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1,
bytes_per_float=4): 6 points."""

import math
import numbers

import numpy as np

from attention_course.grading.harness import Fail, call, points

from . import reference as ref

FN = "attention_cost"
KEYS = ("score_flops", "mix_flops", "weights_bytes")

BASE = call(FN, 6, 6, 8, 2)
CROSS = call(FN, 5, 7, 12, 3, batch_size=2, bytes_per_float=8)
BATCHED = call(FN, 4, 4, 16, 4, batch_size=3, bytes_per_float=2)
DOUBLED = call(FN, 12, 12, 8, 2)  # BASE with twice the sequence length
MORE_HEADS = call(FN, 6, 6, 8, 4)  # BASE with twice the heads, same d_model
# 3 heads do not divide d_model = 10: d_k = 10 // 3 = 3, as the course text writes it, the
# d_k of d_model = 9 (so the two calls give the same counts, whatever else is right or wrong)
INDIVISIBLE = call(FN, 4, 6, 10, 3, batch_size=2)
SAME_D_K = call(FN, 4, 6, 9, 3, batch_size=2)
CASES = (
    (BASE, "attention_cost(6, 6, 8, 2)"),
    (CROSS, "attention_cost(5, 7, 12, 3, batch_size=2, bytes_per_float=8)"),
    (BATCHED, "attention_cost(4, 4, 16, 4, batch_size=3, bytes_per_float=2)"),
)

HINT_FLOPS = (
    "Q K^T has batch_size * num_heads * seq_len_q * seq_len_k entries, each a dot "
    "product of length d_k = d_model // num_heads; one multiply-add counts as 2 FLOPs."
)


def cost(student, c) -> dict:
    """The student's dict, with the three required entries checked to be finite numbers."""
    got = student.value(c)
    if not isinstance(got, dict):
        raise Fail(f"attention_cost must return a dict, got a {type(got).__name__}")
    missing = [k for k in KEYS if k not in got]
    if missing:
        raise Fail(
            f"the dict returned by attention_cost lacks the key(s) {', '.join(missing)} "
            f"(it needs at least {', '.join(KEYS)})"
        )
    for k in KEYS:
        v = got[k]
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v[()]
        if (
            isinstance(v, bool | np.bool_)
            or not isinstance(v, numbers.Real)
            or not (math.isfinite(float(v)))
        ):
            raise Fail(
                f"attention_cost(...)['{k}'] must be a finite number (a count, an int), "
                f"got a {type(v).__name__}"
            )
    return {k: float(got[k]) for k in KEYS}


def expect_entry(student, key: str, hint: str) -> None:
    for c, what in CASES:
        want = ref.attention_cost(*c.args, **c.kwargs)[key]
        if not math.isclose(cost(student, c)[key], want, rel_tol=1e-9):
            raise Fail(f"{what}['{key}'] is not the expected number. {hint}")


HINT_INT = (
    "Every count is an int (exercise contract, attention_cost), and d_k = d_model // "
    "num_heads is a whole number of columns per head, as the course text computes it, also "
    "when num_heads does not divide d_model: a true division gives a fractional head width."
)


def expect_ints(student, c, what: str) -> None:
    got = student.value(c)
    cost(student, c)
    for k in KEYS:
        v = got[k]
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v[()]
        if not isinstance(v, numbers.Integral) or isinstance(v, bool | np.bool_):
            raise Fail(f"{what}['{k}'] is a {type(v).__name__}, not an int. {HINT_INT}")


@points(1)
def test_returns_dict_of_numbers(student):
    """returns a dict of int counts (at least score_flops, mix_flops and weights_bytes), with
    d_k = d_model // num_heads also when num_heads does not divide d_model"""
    for c, what in CASES:
        expect_ints(student, c, what)
    what = "attention_cost(4, 6, 10, 3, batch_size=2)"
    expect_ints(student, INDIVISIBLE, what)
    got, same = cost(student, INDIVISIBLE), cost(student, SAME_D_K)
    for k in KEYS:
        if got[k] != same[k]:
            raise Fail(
                f"{what}['{k}'] differs from attention_cost(4, 6, 9, 3, batch_size=2)['{k}']: "
                f"3 heads do not divide d_model = 10, and both have d_k = 3. {HINT_INT}"
            )


@points(1)
def test_score_flops(student):
    """score_flops (Q K^T over all heads and the batch) for three sets of arguments"""
    expect_entry(student, "score_flops", HINT_FLOPS)


@points(1)
def test_mix_flops(student):
    """mix_flops (weights @ V over all heads and the batch) for three sets of arguments"""
    expect_entry(
        student,
        "mix_flops",
        "weights @ V: each of the batch_size * num_heads * seq_len_q output rows of "
        "a head sums seq_len_k values of width d_k; one multiply-add counts as 2 FLOPs.",
    )


@points(1)
def test_weights_bytes(student):
    """weights_bytes (every head's weight matrix, for the batch) for three sets of arguments"""
    expect_entry(
        student,
        "weights_bytes",
        "Every head of every batch element stores a (seq_len_q, seq_len_k) weight "
        "matrix of bytes_per_float-byte numbers.",
    )


@points(1)
def test_quadratic_growth(student):
    """doubling seq_len (queries and keys) quadruples score_flops and weights_bytes"""
    base, doubled = cost(student, BASE), cost(student, DOUBLED)
    for key in ("score_flops", "weights_bytes"):
        if base[key] <= 0 or not math.isclose(doubled[key], 4 * base[key], rel_tol=1e-9):
            raise Fail(
                f"{key} must grow 4-fold when seq_len_q and seq_len_k both double: "
                "attention compares every query with every key, so its cost is "
                "quadratic in the sequence length."
            )


@points(1)
def test_heads_counted(student):
    """twice the heads (same d_model): weights_bytes doubles, score_flops stays the same"""
    base, more = cost(student, BASE), cost(student, MORE_HEADS)
    if base["weights_bytes"] <= 0 or not math.isclose(
        more["weights_bytes"], 2 * base["weights_bytes"], rel_tol=1e-9
    ):
        raise Fail(
            "weights_bytes must double with twice the heads: every head stores its own "
            "(seq_len_q, seq_len_k) weight matrix."
        )
    if not math.isclose(more["score_flops"], base["score_flops"], rel_tol=1e-9):
        raise Fail(
            "score_flops must not change with the number of heads at a fixed d_model: "
            "more heads means a smaller d_k = d_model // num_heads per head."
        )
