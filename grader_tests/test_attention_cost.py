"""Grader for attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1,
bytes_per_float=4): 6 points."""

import math
import numbers

import numpy as np

from attention_course.grading.harness import Fail, cases, over, points

from . import reference as ref

FN = "attention_cost"
KEYS = ("score_flops", "mix_flops", "weights_bytes")


def doubled(case):
    """The same call with seq_len_q and seq_len_k both doubled."""
    q, k = case.arg("seq_len_q"), case.arg("seq_len_k")
    return {
        "": case.replaced("doubled", what="both lengths doubled", seq_len_q=2 * q, seq_len_k=2 * k)
    }


def whole_width(case):
    """The same call with d_model made a multiple of num_heads: the same d_k."""
    heads = case.arg("num_heads")
    d_model = heads * (case.arg("d_model") // heads)
    return {"": case.replaced("whole", what=f"d_model={d_model}, the same d_k", d_model=d_model)}


def more_heads(case):
    """The same call with twice the heads, d_model the same."""
    return {"": case.replaced("heads", what="twice the heads", num_heads=2 * case.arg("num_heads"))}


@cases
def inputs(draw):
    """Sizes from 1 to tens of thousands, with or without batch_size and bytes_per_float, head
    counts that divide d_model and that do not."""
    both = ("batch_size", "bytes_per_float")
    return {
        "plain": [
            *draw(FN, 3),
            *draw(FN, 5, given=both),
            *draw(FN, 2, given=both, large=("seq_q", "seq_k", "heads")),
        ],
        # num_heads does not divide d_model: the remainder below and above half a head
        "indivisible": draw(
            FN, 4, given=both, edges={"num_heads": "indivisible"}, related={"whole": whole_width}
        ),
        "growth": draw(FN, 3, given=both, related={"doubled": doubled}),
        # an even d_k, so that twice the heads still divide d_model
        "heads": [
            *draw(FN, 1, given=both, sizes={"d_k": 2}, related={"more": more_heads}),
            *draw(FN, 1, given=both, sizes={"d_k": 4}, related={"more": more_heads}),
            *draw(FN, 1, sizes={"d_k": 6}, related={"more": more_heads}),
        ],
    }


def _number(v):
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


def cost(student, case) -> dict:
    """The student's dict, with the three required entries checked to be finite numbers."""
    got = student.value(case)
    if not isinstance(got, dict):
        raise Fail(f"attention_cost must return a dict, got a {type(got).__name__}")
    missing = [k for k in KEYS if k not in got]
    if missing:
        raise Fail(
            f"the dict returned by attention_cost lacks the key(s) {', '.join(missing)} "
            f"(it needs at least {', '.join(KEYS)})"
        )
    for k in KEYS:
        v = _number(got[k])
        if (
            isinstance(v, bool | np.bool_)
            or not isinstance(v, numbers.Real)
            or not math.isfinite(float(v))
        ):
            raise Fail(
                f"the entry {k!r} must be a finite number (a count), got a {type(v).__name__}"
            )
    return {k: _number(got[k]) for k in KEYS}


def expect_entry(student, case, key: str) -> None:
    want = ref.attention_cost(*case.args, **case.kwargs)[key]
    got = cost(student, case)[key]
    if got != want and not math.isclose(float(got), want, rel_tol=1e-12):
        raise Fail(f"the entry {key!r} is not the count the contract gives")


@points(1)
@over("plain", "indivisible")
def test_returns_dict_of_numbers(case, student):
    """returns a dict of int counts (at least score_flops, mix_flops and weights_bytes), with
    d_k = d_model // num_heads also when num_heads does not divide d_model"""
    got = cost(student, case)
    for k in KEYS:
        if not isinstance(got[k], numbers.Integral) or isinstance(got[k], bool | np.bool_):
            raise Fail(f"the entry {k!r} is a {type(got[k]).__name__}, not an int")
    if "whole" in case.related:  # num_heads does not divide d_model: d_k is its floor
        heads, d_model = case.arg("num_heads"), case.arg("d_model")
        same = cost(student, case.related["whole"])
        for k in KEYS:
            if got[k] != same[k]:
                raise Fail(
                    f"the entry {k!r} differs from the one for d_model = "
                    f"{heads * (d_model // heads)}, which has the same d_k = d_model // "
                    f"num_heads = {d_model // heads}"
                )


@points(1)
@over("plain")
def test_score_flops(case, student):
    """score_flops (Q K^T over all heads and the batch), for lengths up to tens of thousands"""
    expect_entry(student, case, "score_flops")


@points(1)
@over("plain")
def test_mix_flops(case, student):
    """mix_flops (weights @ V over all heads and the batch)"""
    expect_entry(student, case, "mix_flops")


@points(1)
@over("plain")
def test_weights_bytes(case, student):
    """weights_bytes (every head's weight matrix, for the batch, of bytes_per_float bytes each)"""
    expect_entry(student, case, "weights_bytes")


@points(1)
@over("growth")
def test_quadratic_growth(case, student):
    """doubling seq_len (queries and keys) quadruples score_flops and weights_bytes"""
    base, twice = cost(student, case), cost(student, case.related["doubled"])
    for key in ("score_flops", "weights_bytes"):
        if base[key] <= 0 or not math.isclose(
            float(twice[key]), 4 * float(base[key]), rel_tol=1e-9
        ):
            raise Fail(f"{key} does not grow 4-fold when seq_len_q and seq_len_k both double")


@points(1)
@over("heads")
def test_heads_counted(case, student):
    """twice the heads (same d_model): weights_bytes doubles, score_flops stays the same"""
    base, more = cost(student, case), cost(student, case.related["more"])
    if base["weights_bytes"] <= 0 or not math.isclose(
        float(more["weights_bytes"]), 2 * float(base["weights_bytes"]), rel_tol=1e-9
    ):
        raise Fail("weights_bytes does not double with twice the heads")
    if not math.isclose(float(more["score_flops"]), float(base["score_flops"]), rel_tol=1e-9):
        raise Fail("score_flops changes with the number of heads at a fixed d_model")
