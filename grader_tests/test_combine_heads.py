"""Grader for combine_heads(H): 6 points."""

import numpy as np

from attention_course.grading.harness import (
    ArrayReader,
    call,
    expect_batch_slice,
    expect_close,
    expect_unmodified,
    hinting,
    points,
    rng,
)

from . import reference as ref

FN = "combine_heads"
r = rng(701)
BASIC = call(FN, r.normal(size=(3, 4, 2)))  # 3 heads, 4 tokens, d_k 2 -> (4, 6)
X_SPLIT = r.normal(size=(5, 8))
SPLIT = call(FN, ref.split_heads(X_SPLIT, 4))  # must give back X_SPLIT
ORDERED = np.arange(3)[:, None, None] * 10.0 + r.random(size=(3, 4, 2))  # head h near 10 h
IN_ORDER = call(FN, ORDERED)
H_BATCH = r.normal(size=(2, 2, 3, 4))
BATCH = call(FN, H_BATCH)  # -> (2, 3, 8)
SLICES = [call(FN, h) for h in H_BATCH]
READONLY = call(FN, *BASIC.args, readonly=True)  # the same call as BASIC, read-only
# num_heads = seq_len = d_k = 3: heads and positions swapped keep the shape (3, 9).
EQUAL = call(FN, r.normal(size=(3, 3, 3)))

HINT = (
    "combine_heads undoes split_heads: swap the num_heads and seq_len axes back to "
    "(..., seq_len, num_heads, d_k), then reshape to (..., seq_len, num_heads * d_k)."
)


READER = ArrayReader(ref.combine_heads, HINT)
combined = READER.checked  # the result with its exact shape


@points(1)
def test_shape(student):
    """3 heads of (4, 2) combine into shape (seq_len, num_heads * d_k) = (4, 6)"""
    combined(student, BASIC, "combine_heads of a (3, 4, 2) array")


@points(2)
def test_inverse_of_split_heads(student):
    """combine_heads(split_heads(X)) is X; random heads (also 3 x 3 x 3) match the reference"""
    expect_close(
        combined(student, SPLIT, "combine_heads(split_heads(X, 4)) for a (5, 8) X"),
        X_SPLIT,
        "combine_heads(split_heads(X, 4)) for a (5, 8) X",
        "It must return X exactly. " + HINT,
    )
    expect_close(
        combined(student, BASIC, "combine_heads of a (3, 4, 2) array"),
        ref.combine_heads(*BASIC.args),
        "combine_heads of a (3, 4, 2) array",
        HINT,
    )
    what = "combine_heads of a (3, 3, 3) array (num_heads = seq_len = d_k)"
    expect_close(
        combined(student, EQUAL, what),
        ref.combine_heads(*EQUAL.args),
        what,
        "With num_heads = seq_len the shape cannot tell heads from positions. " + HINT,
    )


@points(1)
def test_heads_in_order(student):
    """head h lands in columns h*d_k:(h+1)*d_k of every token, heads in order 0, 1, 2"""
    got = combined(student, IN_ORDER, "combine_heads of a (3, 4, 2) array")
    hint = (
        "Each token's row is head 0's d_k values, then head 1's, then head 2's, in this "
        "order. " + HINT
    )
    for h in range(3):
        expect_close(
            got[:, 2 * h : 2 * h + 2],
            ORDERED[h],
            f"columns {2 * h}:{2 * h + 2} (head {h}) of the combined array",
            hint,
        )


@points(1)
def test_batched_input(student):
    """a (2, 2, 3, 4) batch of heads combines into (2, 3, 8), each sequence as on its own"""
    hint = (
        "A transpose with fixed axes (1, 0, 2) fits a single sequence only: with leading "
        "batch axes, the heads and positions axes are the third and second from last, and "
        "only they trade places (exercise contract: Conventions, Batches). " + HINT
    )
    with hinting(hint):
        got = student.value(BATCH)
        for i, c in enumerate(SLICES):
            got_i = READER.ranked(student, c, f"sequence {i} alone")
            what = f"sequence {i} of the combined batch, alone"
            expect_batch_slice(got, (2,), (i,), got_i, what, hint)


@points(1)
def test_input_not_modified(student):
    """H is left unchanged, and a read-only H gives the same result"""
    hint = "Do not update H in place."
    expect_unmodified(student, READONLY, hint, like=BASIC)
    got = READER.ranked(student, BASIC, "combine_heads of H")
    expect_close(
        student.value(READONLY), got, "combine_heads of a read-only H, against a writable one", hint
    )
