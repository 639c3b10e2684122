"""Grader for split_heads(X, num_heads): 8 points."""

import numpy as np

from attention_course.grading.harness import (
    ArrayReader,
    Fail,
    call,
    expect_batch_slice,
    expect_close,
    expect_unmodified,
    hinting,
    points,
    rng,
)

from . import reference as ref

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
# seq_len = num_heads = d_k = 3: heads and positions swapped keep the shape (3, 3, 3).
X_EQUAL = r.normal(size=(3, 9))
EQUAL = call(FN, X_EQUAL, 3)

HINT_SHAPE = (
    "split_heads returns (..., num_heads, seq_len, d_k): reshape to "
    "(..., seq_len, num_heads, d_k), then swap the seq_len and num_heads axes."
)
HINT_BLOCK = (
    "Head h must hold exactly the columns h*d_k:(h+1)*d_k of every token. Reshaping "
    "straight to (num_heads, seq_len, d_k) mixes tokens and heads: reshape to "
    "(seq_len, num_heads, d_k) first, then swap the two axes."
)


READER = ArrayReader(ref.split_heads, HINT_SHAPE)
heads = READER.checked  # the result with its exact shape


@points(2)
def test_shape(student):
    """a (4, 6) X with 3 heads gives shape (num_heads, seq_len, d_k) = (3, 4, 2)"""
    heads(student, BASIC, "split_heads of a (4, 6) X into 3 heads")


@points(2)
def test_head_is_column_block(student):
    """head h is exactly columns h*d_k:(h+1)*d_k of X, also when seq_len = num_heads = d_k"""
    got = heads(student, BASIC, "split_heads of a (4, 6) X into 3 heads")
    X, num_heads = BASIC.args
    d_k = X.shape[-1] // num_heads
    for h in range(num_heads):
        expect_close(got[h], X[:, h * d_k : (h + 1) * d_k], f"head {h} of a (4, 6) X", HINT_BLOCK)
    what = "split_heads of a (3, 9) X into 3 heads (seq_len = num_heads = d_k = 3)"
    got = heads(student, EQUAL, what, HINT_BLOCK)
    hint = "With seq_len = num_heads the shape cannot tell heads from positions. " + HINT_BLOCK
    for h in range(3):
        expect_close(got[h], X_EQUAL[:, 3 * h : 3 * h + 3], f"head {h} of a (3, 9) X", hint)


@points(2)
def test_batched_input(student):
    """batches (2, 3, 8) into 2 heads and (2, 1, 3, 6) into 3 heads equal each sequence alone"""
    hint = (
        "A reshape or transpose with fixed axes (1, 0, 2) fits a single sequence only: with "
        "leading batch axes, only the last axis is split into heads and the new heads axis "
        "goes before the positions, the batch axes staying first (exercise contract: "
        "Conventions, Batches)."
    )
    with hinting(hint):
        for c, slices in BATCHES:
            what = f"split_heads of a {c.args[0].shape} batch into {c.args[1]} heads"
            got, lead = student.value(c), c.args[0].shape[:-2]
            for i, c_i in slices.items():
                got_i = READER.ranked(student, c_i, f"sequence {i} alone")
                expect_batch_slice(
                    got, lead, i, got_i, f"{what}: sequence {i}, against it alone", hint
                )


@points(1)
def test_raises_value_error(student):
    """raises ValueError when d_model is not divisible by num_heads (6 by 4, 10 by 4)"""
    if student.outcome(BASIC).status != "ok":
        raise Fail(
            "split_heads of a (4, 6) X into 3 heads (divisible) "
            f"{student.outcome(BASIC).describe()}: only a d_model that num_heads does not "
            "divide may raise ValueError."
        )
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
    expect_unmodified(student, READONLY, hint, like=BASIC)
    got = READER.ranked(student, BASIC, "split_heads of a (4, 6) X")
    expect_close(
        student.value(READONLY), got, "split_heads of a read-only X, against a writable one", hint
    )
