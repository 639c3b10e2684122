"""Grader for combine_heads(H): 6 points."""

import numpy as np

from attention_course.grading.draws import alone, pieces, writable
from attention_course.grading.harness import (
    ArrayReader,
    cases,
    expect_batch_slice,
    expect_close,
    expect_readonly_twin,
    expect_unmodified,
    over,
    points,
)

from . import reference as ref

FN = "combine_heads"


def in_order(case):
    """The same shape, head h's values near 10 h: the order of the heads shows."""
    H = case.arg("H")
    marked = np.arange(H.shape[-3])[:, None, None] * 10.0 + H * 0.01
    return {"": case.replaced("ordered", what="head h's values near 10 h", H=marked)}


@cases
def inputs(draw):
    """Any number of heads, positions and widths."""
    return {
        "plain": [*draw(FN, 6, ranks=(0,)), *draw(FN, 2, ranks=(0,), large=("heads",))],
        # num_heads = seq_len = d_k: heads and positions swapped keep the shape
        "equal": draw(FN, 3, ranks=(0,), ties=[("heads", "seq", "d_k")], sizes={"heads": (2, 4)}),
        "ordered": [
            c.related["ordered"]
            for c in draw(FN, 3, ranks=(0,), sizes={"heads": (2, 4)}, related={"ordered": in_order})
        ],
        "batched": draw(FN, 4, ranks=(1, 2), related={"alone": alone}),
        "readonly": draw(FN, 3, ranks=(0,), readonly=True, related={"writable": writable}),
    }


READER = ArrayReader(ref.combine_heads, "")
combined = READER.checked  # the result with its exact shape


@points(1)
@over("plain")
def test_shape(case, student):
    """(num_heads, seq_len, d_k) combines into (seq_len, num_heads * d_k)"""
    combined(student, case, "the result")


@points(2)
@over("plain", "equal")
def test_inverse_of_split_heads(case, student):
    """combine_heads undoes split_heads: the heads side by side, in order, for every token (also
    with num_heads = seq_len = d_k)"""
    expect_close(
        combined(student, case, "the result"),
        ref.combine_heads(*case.args),
        "the combined heads, against split_heads' input",
    )


@points(1)
@over("ordered")
def test_heads_in_order(case, student):
    """head h lands in columns h*d_k:(h+1)*d_k of every token, heads in order 0, 1, 2, ..."""
    got = combined(student, case, "the result")
    H = case.arg("H")
    d_k = H.shape[-1]
    for h in range(H.shape[-3]):
        expect_close(
            got[..., h * d_k : (h + 1) * d_k],
            H[h],
            f"columns {h * d_k}:{(h + 1) * d_k}, against head {h}",
        )


@points(1)
@over("batched")
def test_batched_input(case, student):
    """a batch of heads (one or two leading axes) combines each sequence as it alone would"""
    got = student.value(case)
    lead = case.arg("H").shape[:-3]
    for index, single in pieces(case):
        got_i = READER.ranked(student, single, f"sequence {index} alone")
        expect_batch_slice(got, lead, index, got_i, f"sequence {index} of the result", "")


@points(1)
@over("readonly")
def test_input_not_modified(case, student):
    """H is left unchanged: a read-only H gives what a writable one gives"""
    twin = case.related["writable"]
    expect_unmodified(student, case, like=twin)
    got = READER.ranked(student, twin, "the result for a writable H")
    expect_readonly_twin(got, student.value(case), "the result", "")
