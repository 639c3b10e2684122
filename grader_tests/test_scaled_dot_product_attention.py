"""Grader for scaled_dot_product_attention(Q, K, V, mask=None): 15 points."""

import numpy as np

from attention_course.grading.harness import (
    Fail,
    PairReader,
    call,
    expect_close,
    expect_no_warnings,
    expect_pair_close,
    expect_pair_readonly_twin,
    expect_pair_slice,
    expect_unmodified,
    expect_zero_where,
    explain_shape_errors,
    hinting,
    points,
    renormalised,
    rng,
)

from . import reference as ref
from .graded_callees import expect_same_with_graded_callees

FN = "scaled_dot_product_attention"
r = rng(301)


def qkv(seq_q: int, seq_k: int, d_k: int, d_v: int, lead: tuple = ()) -> tuple:
    return (
        r.normal(size=(*lead, seq_q, d_k)),
        r.normal(size=(*lead, seq_k, d_k)),
        r.normal(size=(*lead, seq_k, d_v)),
    )


def partial_mask(seq_q: int, seq_k: int) -> np.ndarray:
    """Every row has forbidden keys and allowed keys."""
    mask = r.random((seq_q, seq_k)) < 0.5
    mask[:, 0] = True
    mask[np.arange(seq_q), r.integers(1, seq_k, seq_q)] = False
    return mask


# seq_q 3, seq_k 5, d_k 4, d_v 2: every size differs, so no width can stand in for another.
QKV = qkv(3, 5, 4, 2)
BASIC = call(FN, *QKV)
LARGE_DK = call(FN, *qkv(2, 3, 36, 2))  # sqrt(36) = 6: a missing or wrong scale shows clearly
LEAD = (2, 3)
BATCH_QKV = qkv(3, 5, 4, 2, lead=LEAD)
BATCH = call(FN, *BATCH_QKV)
SLICES = {i: call(FN, *(a[i] for a in BATCH_QKV)) for i in np.ndindex(*LEAD)}
MASK = partial_mask(3, 5)
MASKED = call(FN, *QKV, mask=MASK)  # the same Q, K, V as BASIC
BATCH_MASK = partial_mask(3, 5)
BATCH_MASKED = call(FN, *BATCH_QKV, mask=BATCH_MASK)
MASKED_SLICES = {i: call(FN, *(a[i] for a in BATCH_QKV), mask=BATCH_MASK) for i in SLICES}
FULL_MASK = partial_mask(3, 5)
FULL_MASK[1] = True  # query 1 may see no key at all
FULLY_MASKED = call(FN, *QKV, mask=FULL_MASK)
# Queries and keys sharing a large column: scores near 1250 that differ by a few units, which
# float64 keeps and a lower precision inside the function rounds (weights off by ~1e-4).
_SMALL = np.sin(np.arange(1.0, 16.0)).reshape(5, 3)
PRECISE_QKV = (
    np.column_stack([np.full(2, 50.0), _SMALL[:2]]),
    np.column_stack([np.full(3, 50.0), _SMALL[2:]]),
    np.cos(np.arange(6.0)).reshape(3, 2),
)
PRECISE = call(FN, *PRECISE_QKV)
READONLY = call(FN, *QKV, mask=MASK, readonly=True)  # the same call as MASKED, read-only
# Q, K, V of one shape (4 queries, 4 keys, d_k = d_v = 4) and a square mask that is not
# symmetric: queries for keys, keys for values, or a transposed mask keep every shape right and
# change only the values.
SQUARE_QKV = qkv(4, 4, 4, 4)
SQUARE = call(FN, *SQUARE_QKV)
SQUARE_MASK = partial_mask(4, 4)
SQUARE_MASK[0] = [False, True, True, True]  # not symmetric: the first query sees one key only
SQUARE_MASKED = call(FN, *SQUARE_QKV, mask=SQUARE_MASK)

HINT_ORDER = (
    "Return (output, weights) in this order: output (..., seq_len_q, d_v), weights "
    "(..., seq_len_q, seq_len_k)."
)
HINT_SCALE = (
    "Divide the scores Q K^T by np.sqrt(d_k) with d_k = Q.shape[-1] (the width of "
    "queries and keys, not of the values, and its square root, not d_k itself)."
)
HINT_BEFORE = (
    "A mask acts on the scores, before the softmax: a forbidden score of -inf has weight "
    "exactly 0 and the allowed weights of its row still sum to 1. Weights zeroed after the "
    "softmax, or forbidden scores given a finite value, do neither (exercise contract: "
    "Conventions, a mask)."
)
HINT_MASK = "True in the mask means FORBIDDEN: those keys must get weight exactly 0."
HINT_BATCH = (
    "In a batch the last two axes of K are a sequence's keys and the axes before them are the "
    "batch: a transpose that reverses every axis mixes the batch into the keys, and d_k read "
    "from another axis than Q's last is not the width of the queries (exercise contract: "
    "Conventions, Batches)."
)


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
READER = PairReader(ref.scaled_dot_product_attention, HINT_ORDER)
attend, floats = READER.checked, READER.ranked


@points(1)
def test_returns_output_and_weights(student):
    """returns (output, weights) of shapes (seq_len_q, d_v) and (seq_len_q, seq_len_k)"""
    attend(student, BASIC, "3 queries, 5 keys, d_k = 4, d_v = 2", varies=False)


@points(2)
def test_values_match_reference(student):
    """output and weights are softmax(Q K^T / sqrt(d_k)) V and its weights, in float64"""
    got = attend(student, BASIC, "3 queries, 5 keys, d_k = 4, d_v = 2")
    want = ref.scaled_dot_product_attention(*BASIC.args)
    hint = "Compute softmax(Q @ K^T / sqrt(d_k)) over the keys, then multiply by V."
    expect_pair_close(got, want, "of 3 queries against 5 keys", hint)
    got = attend(student, SQUARE, "4 queries, 4 keys, d_k = d_v = 4")
    want = ref.scaled_dot_product_attention(*SQUARE.args)
    hint = (
        "Q, K and V have the same shape here, so only the values show which is which: the "
        "scores compare the queries (rows) with the keys (Q @ K^T), and the output mixes the "
        "values (weights @ V), not the keys. " + hint
    )
    expect_pair_close(got, want, "when Q, K and V all have shape (4, 4)", hint)
    got = attend(student, PRECISE, "2 queries, 3 keys, scores near 1250")
    want = ref.scaled_dot_product_attention(*PRECISE.args)
    hint = (
        "float64 inputs are computed in float64 (exercise contract: Conventions, float64): "
        "scores near 1250 that differ by a few units lose their differences in float32 or "
        "float16, even when the result is cast back."
    )
    expect_pair_close(got, want, "for scores near 1250 (queries and keys share a column)", hint)


@points(2)
def test_weights_rows_sum_to_one(student):
    """each row of the weights is a distribution over the keys (3 queries, 5 keys)"""
    _, w = attend(student, BASIC, "3 queries, 5 keys")
    if np.isnan(w).any() or (w < 0).any() or not np.allclose(w.sum(axis=-1), 1.0, rtol=1e-6):
        raise Fail(
            "the weights must be non-negative and each row (one query) must sum to 1: "
            "is the softmax taken over the key axis (the last one, axis=-1), not over the "
            "queries?"
        )


@points(2)
def test_scaled_by_sqrt_d_k(student):
    """scores are divided by sqrt(d_k), d_k = Q.shape[-1] (d_k = 36, d_v = 2)"""
    got = attend(student, LARGE_DK, "2 queries, 3 keys, d_k = 36, d_v = 2")
    want = ref.scaled_dot_product_attention(*LARGE_DK.args)
    # A wrong scale (none, 1/d_k, d_v's) moves these weights far more than 1e-3; whether the
    # arithmetic is float64 is test_values_match_reference's question, not this one's.
    expect_pair_close(got, want, "for d_k = 36", HINT_SCALE, rtol=1e-3, atol=1e-6)


@points(2)
def test_batched_equals_per_slice_loop(student):
    """a (2, 3, seq_len, d) batch gives the same result as attending slice by slice"""
    hint = HINT_BATCH
    with hinting(hint):
        batch = floats(student, BATCH, "a batch of shape (2, 3, seq_len, d)")
        for i, c in SLICES.items():
            single = floats(student, c, f"batch slice {i} on its own")
            expect_pair_slice(batch, LEAD, i, single, f"batch slice {i}", hint)


@points(1)
def test_forbidden_weights_are_exactly_zero(student):
    """weights of forbidden keys (mask True) are exactly 0, allowed keys keep a positive weight"""
    _, w = attend(student, MASKED, "a masked call")
    hint = HINT_MASK + " Forbidden scores become -np.inf before the softmax."
    expect_zero_where(w, MASK, "the weights at forbidden (mask True) positions", hint)
    if not (w[~MASK] > 0).all():
        raise Fail("the weights at allowed (mask False) positions must stay positive. " + hint)
    _, w_sq = attend(student, SQUARE_MASKED, "a call with a square (4, 4) mask")
    hint_sq = (
        "Entry (i, j) of the mask forbids query i to see key j: use the mask as it is, not "
        "transposed (with a square mask a transposed one has the right shape). " + hint
    )
    expect_zero_where(w_sq, SQUARE_MASK, "the weights where a square mask is True", hint_sq)
    if not (w_sq[~SQUARE_MASK] > 0).all():
        raise Fail("the weights where a square mask is False must stay positive. " + hint_sq)


@points(2)
def test_mask_applied_before_softmax(student):
    """with a mask, each row's weights are the unmasked ones renormalised over allowed keys"""
    out, w = attend(student, MASKED, "a masked call")
    if np.isnan(w).any() or not np.allclose(w.sum(axis=-1), 1.0, rtol=1e-6):
        raise Fail(
            "with a mask, each row of the weights must still sum to 1 over the allowed "
            "keys. " + HINT_BEFORE
        )
    _, w_unmasked = attend(student, BASIC, "the same call without a mask")
    expect_close(
        w,
        renormalised(w_unmasked, MASK),
        "weights of a masked call, against the unmasked weights renormalised over the allowed keys",
        HINT_MASK + " " + HINT_BEFORE,
    )
    expect_close(
        out,
        w @ QKV[2],
        "output of a masked call, against its weights @ V",
        "The output must use the masked weights. " + HINT_BEFORE,
    )


@points(1)
def test_broadcast_mask_with_batch(student):
    """a (seq_len_q, seq_len_k) mask applies to every slice of a (2, 3, ...) batch"""
    hint = (
        "One (seq_len_q, seq_len_k) mask must broadcast against scores with any leading "
        "axes: indexing the scores with the mask fits only scores of the mask's own shape "
        "(exercise contract: Conventions, a mask broadcasts)."
    )
    with hinting(hint):
        batch = floats(student, BATCH_MASKED, "a batch with one (3, 5) mask")
        for i, c in MASKED_SLICES.items():
            single = floats(student, c, f"masked batch slice {i} on its own")
            expect_pair_slice(batch, LEAD, i, single, f"masked batch slice {i}", hint)


@points(1)
def test_fully_masked_row_gives_zeros(student):
    """a query whose every key is forbidden gets zero weights and output, no NaN or warning"""
    out, w = attend(student, FULLY_MASKED, "a call where query 1 may see no key")
    hint = (
        "With every key forbidden, the row of scores is all -inf: its weights must be 0 "
        "(not NaN from 0/0, and not uniform as with -1e9 instead of -np.inf), so its output "
        "is 0. Does your softmax handle an all -inf row?"
    )
    if np.isnan(w).any() or np.isnan(out).any():
        raise Fail("the weights or the output contain NaN. " + hint)
    if not (np.all(w[1] == 0) and np.all(out[1] == 0)):
        raise Fail("the fully masked query's weights and output must be all zeros. " + hint)
    if not (w[[0, 2]] > 0).any():
        raise Fail("the other queries, which may see some keys, got no weight at all. " + hint)
    expect_no_warnings(student, FULLY_MASKED, hint)


@points(1)
def test_inputs_not_modified(student):
    """Q, K, V and the mask are left unchanged, and read-only inputs give the same result"""
    hint = "Build new arrays; do not scale Q or fill the scores into an input in place."
    expect_unmodified(student, READONLY, hint, like=MASKED)
    expect_pair_readonly_twin(
        floats(student, MASKED, "a masked call"),
        floats(student, READONLY, "the same call with read-only inputs"),
        hint,
    )


@points(0)
def test_same_with_your_softmax(passed_only_with_callees):
    """(0 points) your softmax, graded above, costs no points here"""
    expect_same_with_graded_callees(FN, passed_only_with_callees)
