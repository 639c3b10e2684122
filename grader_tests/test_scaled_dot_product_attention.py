"""Grader for scaled_dot_product_attention(Q, K, V, mask=None): 15 points."""

import numpy as np

from attention_course.grading.draws import alone, pieces, writable
from attention_course.grading.harness import (
    RELATION_ATOL,
    RELATION_RTOL,
    Fail,
    PairReader,
    cases,
    expect_close,
    expect_no_warnings,
    expect_pair_close,
    expect_pair_readonly_twin,
    expect_pair_slice,
    expect_unmodified,
    expect_zero_where,
    explain_shape_errors,
    over,
    points,
    renormalised,
)

from . import reference as ref

FN = "scaled_dot_product_attention"


def unmasked(case):
    """The same Q, K and V without the mask."""
    return {"": case.replaced("unmasked", mask=None)}


def _precise():
    """Queries and keys sharing a large column: scores near 1250 that differ by a few units,
    which float64 keeps and a lower precision inside the function rounds (weights off by
    ~1e-4)."""
    small = np.sin(np.arange(1.0, 16.0)).reshape(5, 3)
    Q = np.column_stack([np.full(2, 50.0), small[:2]])
    K = np.column_stack([np.full(3, 50.0), small[2:]])
    return Q, K, np.cos(np.arange(6.0)).reshape(3, 2)


@cases
def inputs(draw):
    """Every shape the contract allows, masks in every broadcastable form, and the edges."""
    return {
        # one sequence each (batches have tests of their own)
        "plain": draw(FN, 6, ranks=(0,)),
        # Q, K, V of one shape: a mix-up of the three keeps every shape right
        "square": draw(FN, 3, ranks=(0,), ties=[("seq_q", "seq_k", "d_k", "d_v")]),
        "precise": [draw.case(FN, *_precise(), what="2 queries and 3 keys sharing a column of 50")],
        "wide": draw(FN, 3, ranks=(0,), large=("d_k",)),
        "large_scores": draw(FN, 3, ranks=(0,), edges={"Q": "large"}),
        "batched": draw(FN, 4, ranks=(1, 2), related={"alone": alone}),
        "masked": draw(FN, 6, ranks=(0,), given=("mask",), related={"unmasked": unmasked}),
        "square_masked": draw(FN, 3, given=("mask",), ties=[("seq_q", "seq_k")], ranks=(0,)),
        # every broadcastable mask form
        "masked_batched": draw(FN, 10, given=("mask",), ranks=(1, 2), related={"alone": alone}),
        "fully_masked": draw(
            FN, 6, ranks=(0,), given=("mask",), edges={"mask": "fully_masked_row"}
        ),
        "readonly": draw(
            FN,
            3,
            ranks=(0,),
            given=("mask",),
            edges={"mask": "fully_masked_row"},
            readonly=True,
            related={"writable": writable},
        ),
    }


def _shape_property(c, shapes) -> str:
    """What a shape mismatch inside scaled_dot_product_attention breaks, with this call's sizes."""
    Q, K, V = c.args[:3]
    return (
        f"Here Q is {Q.shape} (seq_len_q = {Q.shape[-2]}, d_k = {Q.shape[-1]}), K is {K.shape} "
        f"and V is {V.shape} (seq_len_k = {K.shape[-2]}, d_v = {V.shape[-1]}): the scores "
        "compare every query with every key over d_k, one (seq_len_q, seq_len_k) matrix per "
        "batch element, any mask broadcasts to them, and the weights mix the rows of V "
        "(exercise contract: scaled_dot_product_attention, Conventions)."
    )


explain_shape_errors(FN, _shape_property)

# attend: (output, weights) with their exact shapes; floats: only their ranks, for relational
# tests (see PairReader).
READER = PairReader(ref.scaled_dot_product_attention, "")
attend, floats = READER.checked, READER.ranked
WHAT = "for this input"


def want(case):
    return ref.scaled_dot_product_attention(*case.args, **case.kwargs)


@points(1)
@over("plain")
def test_returns_output_and_weights(case, student):
    """returns (output, weights) of shapes (..., seq_len_q, d_v) and (..., seq_len_q, seq_len_k)"""
    attend(student, case, "the result", varies=False)


@points(2)
@over("plain", "square", "precise")
def test_values_match_reference(case, student):
    """output and weights are softmax(Q K^T / sqrt(d_k)) V and its weights, in float64"""
    expect_pair_close(attend(student, case, "the result"), want(case), WHAT, "")


@points(2)
@over("plain", "large_scores")
def test_weights_rows_sum_to_one(case, student):
    """each row of the weights is a distribution over the keys, also for scores near 1000"""
    _, w = attend(student, case, "the result", varies=False)
    if np.isnan(w).any() or (w < 0).any() or not np.allclose(w.sum(axis=-1), 1.0, rtol=1e-6):
        raise Fail(
            "the weights must be non-negative and each row (one query) must sum to 1 over the keys"
        )


@points(2)
@over("wide")
def test_scaled_by_sqrt_d_k(case, student):
    """scores are divided by sqrt(d_k), d_k = Q.shape[-1], for widths d_k of 24 to 80"""
    # A wrong scale (none, 1/d_k, d_v's) moves these weights far more than 1e-3; whether the
    # arithmetic is float64 is test_values_match_reference's question, not this one's.
    got = attend(student, case, "the result")
    expect_pair_close(got, want(case), WHAT, "", rtol=1e-3, atol=1e-6)


@points(2)
@over("batched")
def test_batched_equals_per_slice_loop(case, student):
    """a batch (one or two leading axes) gives the same result as attending slice by slice"""
    batch = floats(student, case, "the batch")
    for index, single in pieces(case):
        got = floats(student, single, f"batch element {index} on its own")
        expect_pair_slice(batch, batch[0].shape[: len(index)], index, got, f"element {index}", "")


@points(1)
@over("masked", "square_masked")
def test_forbidden_weights_are_exactly_zero(case, student):
    """weights of forbidden keys (mask True) are exactly 0, allowed keys keep a positive weight"""
    _, w = attend(student, case, "the result")
    mask = np.broadcast_to(case.arg("mask"), w.shape)
    expect_zero_where(w, mask, "the weights at forbidden (mask True) positions", "")
    if not (w[~mask] > 0).all():
        raise Fail("the weights at allowed (mask False) positions must stay positive")


@points(2)
@over("masked")
def test_mask_applied_before_softmax(case, student):
    """with a mask, each row's weights are the unmasked ones renormalised over the allowed keys,
    and the output is those weights times V"""
    out, w = attend(student, case, "the result")
    if np.isnan(w).any() or not np.allclose(w.sum(axis=-1), 1.0, rtol=1e-6):
        raise Fail("with a mask, each row of the weights must still sum to 1 over the allowed keys")
    _, w_unmasked = attend(student, case.related["unmasked"], "the same call without a mask")
    expect_close(
        w,
        renormalised(w_unmasked, case.arg("mask")),
        "weights of the masked call, against the unmasked weights renormalised over the "
        "allowed keys",
        rtol=RELATION_RTOL,
        atol=RELATION_ATOL,
    )
    expect_close(
        out,
        w @ case.arg("V"),
        "output of the masked call, against its weights @ V",
        rtol=RELATION_RTOL,
        atol=RELATION_ATOL,
    )


@points(1)
@over("masked_batched")
def test_broadcast_mask_with_batch(case, student):
    """a mask of any broadcastable shape applies to every slice of a batch"""
    batch = floats(student, case, "the batch")
    for index, single in pieces(case):
        got = floats(student, single, f"batch element {index} on its own")
        expect_pair_slice(batch, batch[0].shape[: len(index)], index, got, f"element {index}", "")


@points(1)
@over("fully_masked")
def test_fully_masked_row_gives_zeros(case, student):
    """a query whose every key is forbidden gets zero weights and output, no NaN or warning"""
    out, w = attend(student, case, "the result", varies=False)
    if np.isnan(w).any() or np.isnan(out).any():
        raise Fail("the weights or the output contain NaN")
    full = np.broadcast_to(case.arg("mask"), w.shape).all(axis=-1)  # (..., seq_len_q)
    if not (np.all(w[full] == 0) and np.all(out[full] == 0)):
        raise Fail("a fully masked query's weights and output must be all zeros")
    if not full.all() and not (w[~full] > 0).any():
        raise Fail("the other queries, which may see some keys, got no weight at all")
    expect_no_warnings(student, case)


@points(1)
@over("readonly")
def test_inputs_not_modified(case, student):
    """Q, K, V and the mask are left unchanged (a read-only mask with a fully masked row
    included): read-only inputs give what writable ones give"""
    twin = case.related["writable"]
    expect_unmodified(student, case, like=twin)
    expect_pair_readonly_twin(
        floats(student, twin, "the call with writable inputs"),
        floats(student, case, "the same call with read-only inputs"),
        "",
    )
