"""Grader for split_heads(X, num_heads): 8 points."""

import numpy as np

from grader_tests import reference as ref
from grader_tests.harness import (
    Fail,
    call,
    expect_array,
    expect_close,
    expect_shape,
    expect_unmodified,
    points,
    rng,
)

FN = "split_heads"
r = rng(601)
X = r.normal(size=(4, 6))
BASIC = call(FN, X, 3)  # -> (3, 4, 2)
X_BATCH, X_4D = r.normal(size=(2, 3, 8)), r.normal(size=(2, 1, 3, 6))
BATCHES = [
    (call(FN, X_BATCH, 2), {i: call(FN, X_BATCH[i], 2) for i in np.ndindex(2)}),  # (2, 2, 3, 4)
    (call(FN, X_4D, 3), {i: call(FN, X_4D[i], 3) for i in np.ndindex(2, 1)}),  # (2, 1, 3, 3, 2)
]
NOT_DIVISIBLE = call(FN, r.normal(size=(3, 6)), 4)
NOT_DIVISIBLE_BATCH = call(FN, r.normal(size=(2, 3, 10)), 4)
READONLY = call(FN, X, 3, readonly=True)  # the same call as BASIC, read-only

HINT_SHAPE = (
    "split_heads returns (..., num_heads, seq_len, d_k): reshape to "
    "(..., seq_len, num_heads, d_k), then swap the seq_len and num_heads axes."
)
HINT_BLOCK = (
    "Head h must hold exactly the columns h*d_k:(h+1)*d_k of every token. Reshaping "
    "straight to (num_heads, seq_len, d_k) mixes tokens and heads: reshape to "
    "(seq_len, num_heads, d_k) first, then swap the two axes."
)


def heads(student, c, what: str, hint: str = HINT_SHAPE) -> np.ndarray:
    want = ref.split_heads(*c.args)
    got = expect_shape(student.value(c), want.shape, what, hint)
    return expect_array(got, what)


def expect_slice(batch, lead: tuple, i: tuple, single: np.ndarray, what: str, hint: str) -> None:
    """Slice i of a batched result equals the result for that slice alone."""
    batch = expect_array(batch, what)
    if batch.shape != (*lead, *single.shape):
        raise Fail(
            f"{what}: shape {batch.shape}, expected the batch dimensions {lead} followed by "
            f"the shape {single.shape} of the result for one sequence. {hint}"
        )
    expect_close(batch[i], single, what, hint)


@points(2)
def test_shape(student):
    """a (4, 6) X with 3 heads gives shape (num_heads, seq_len, d_k) = (3, 4, 2)"""
    heads(student, BASIC, "split_heads of a (4, 6) X into 3 heads")


@points(2)
def test_head_is_column_block(student):
    """head h is exactly columns h*d_k:(h+1)*d_k of X, for every token"""
    got = heads(student, BASIC, "split_heads of a (4, 6) X into 3 heads")
    X, num_heads = BASIC.args
    d_k = X.shape[-1] // num_heads
    for h in range(num_heads):
        expect_close(got[h], X[:, h * d_k : (h + 1) * d_k], f"head {h} of a (4, 6) X", HINT_BLOCK)


@points(2)
def test_batched_input(student):
    """batches (2, 3, 8) into 2 heads and (2, 1, 3, 6) into 3 heads equal each sequence alone"""
    hint = (
        "Work on the last two axes only: X.reshape(*X.shape[:-1], num_heads, d_k) and "
        "np.swapaxes(..., -2, -3); a transpose with fixed axes (1, 0, 2) only fits a single "
        "sequence."
    )
    for c, slices in BATCHES:
        what = f"split_heads of a {c.args[0].shape} batch into {c.args[1]} heads"
        got, lead = student.value(c), c.args[0].shape[:-2]
        for i, c_i in slices.items():
            got_i = expect_array(student.value(c_i), f"sequence {i} of that batch on its own")
            expect_slice(got, lead, i, got_i, f"{what}: sequence {i}, against it alone", hint)


@points(1)
def test_raises_value_error(student):
    """raises ValueError when d_model is not divisible by num_heads (6 by 4, 10 by 4)"""
    for c, what in (
        (NOT_DIVISIBLE, "split_heads of a (3, 6) X into 4 heads"),
        (NOT_DIVISIBLE_BATCH, "split_heads of a (2, 3, 10) X into 4 heads"),
    ):
        out = student.outcome(c)
        if out.status == "error" and out.error_type == "ValueError":
            continue
        if out.status == "ok":
            raise Fail(
                f"{what} returned a value: it must raise ValueError, because d_model "
                "is not divisible by num_heads (check d_model % num_heads first)."
            )
        raise Fail(
            f"{what} {out.describe()}: it must raise ValueError "
            "(raise ValueError(...) when d_model % num_heads != 0)."
        )


@points(1)
def test_input_not_modified(student):
    """X is left unchanged, and a read-only X gives the same result"""
    hint = "Do not update X in place."
    expect_unmodified(student, BASIC, hint)
    got = expect_array(student.value(BASIC), "split_heads of a (4, 6) X into 3 heads")
    expect_close(
        student.value(READONLY), got, "split_heads of a read-only X, against a writable one", hint
    )
