"""Grader for self_attention(X, W_q, W_k, W_v, causal=False): 10 points."""

import numpy as np

from attention_course.grading.harness import (
    PairReader,
    call,
    expect_close,
    expect_pair_close,
    expect_pair_readonly_twin,
    expect_pair_slice,
    expect_unmodified,
    expect_zero_where,
    hinting,
    points,
    renormalised,
    rng,
)

from . import reference as ref
from .graded_callees import expect_same_with_graded_callees
from .pasted_helpers import expect_same_with_pasted_helpers

FN = "self_attention"
r = rng(401)
# seq_len 5, d_model 6, d_k 4, d_v 3: W_v is narrower than W_q and W_k.
W = (r.normal(size=(6, 4)) * 0.7, r.normal(size=(6, 4)) * 0.7, r.normal(size=(6, 3)))
X = r.normal(size=(5, 6))
POS = 2  # the outputs up to this position must not see later tokens
X_LATER = X.copy()
X_LATER[POS + 1 :] = r.normal(size=(5 - POS - 1, 6)) * 3
PERM = np.array([3, 0, 4, 1, 2])
CAUSAL_MASK = ref.causal_mask(5)

BASIC = call(FN, X, *W)
CAUSAL = call(FN, X, *W, causal=True)
CAUSAL_LATER = call(FN, X_LATER, *W, causal=True)
PERMUTED = call(FN, X[PERM], *W)
X_BATCH = r.normal(size=(2, 4, 6))
BATCH = call(FN, X_BATCH, *W, causal=True)
LEAD = (2,)
SLICES = [call(FN, x, *W, causal=True) for x in X_BATCH]
READONLY = call(FN, X, *W, causal=True, readonly=True)  # the same call as CAUSAL, read-only
# d_model = d_k = d_v = 4: X, W_q, W_k and W_v could stand in for each other with every shape
# right, so only the values show a mix-up.
EQUAL = call(FN, r.normal(size=(5, 4)), *(r.normal(size=(4, 4)) * 0.7 for _ in range(3)))

HINT = (
    "Q, K and V all come from X (create_qkv), then scaled_dot_product_attention; the "
    "weights are (seq_len, seq_len) and the output (seq_len, d_v)."
)
HINT_CAUSAL = (
    "causal=True passes causal_mask(seq_len) as the mask: True (forbidden) strictly "
    "above the diagonal, so position i sees positions 0..i only."
)


# attend: (output, weights) with their exact shapes; floats: only their ranks, for relational
# tests (see PairReader).
READER = PairReader(ref.self_attention, HINT)
attend, floats = READER.checked, READER.ranked


@points(2)
def test_values_match_reference(student):
    """unmasked self-attention: W_v narrower than W_q, and X and every W of one shape"""
    got = attend(student, BASIC, "self-attention of 5 tokens")
    want = ref.self_attention(*BASIC.args)
    hint = HINT + " causal=False means no mask at all."
    expect_pair_close(got, want, "of self-attention of 5 tokens", hint)
    got = attend(student, EQUAL, "self-attention with d_model = d_k = d_v = 4")
    want = ref.self_attention(*EQUAL.args)
    hint = (
        "X and the three weight matrices all have shape (4, 4) here, so only the values show "
        "a mix-up: Q = X @ W_q, K = X @ W_k, V = X @ W_v (the values are projected too). " + HINT
    )
    expect_pair_close(got, want, "of self-attention with X and every W of shape (4, 4)", hint)


@points(2)
def test_causal_masks_the_future(student):
    """causal=True: future weights are exactly 0, the rest renormalised over positions 0..i"""
    w = attend(student, CAUSAL, "causal self-attention of 5 tokens", HINT_CAUSAL)[1]
    expect_zero_where(
        w, CAUSAL_MASK, "the weights above the diagonal (future positions)", HINT_CAUSAL
    )
    w_full = attend(student, BASIC, "self-attention of the same 5 tokens")[1]
    expect_close(
        w,
        renormalised(w_full, CAUSAL_MASK),
        "causal weights, against the unmasked weights renormalised over positions 0..i",
        HINT_CAUSAL,
    )


@points(2)
def test_causal_future_does_not_leak(student):
    """with causal=True, outputs up to position i stay the same when later tokens change"""
    out, w = attend(student, CAUSAL, "causal self-attention of 5 tokens", HINT_CAUSAL)
    out2, w2 = attend(student, CAUSAL_LATER, "causal self-attention of 5 tokens", HINT_CAUSAL)
    hint = (
        "Changing tokens after position 2 changed what positions 0..2 see: with "
        "causal=True a position must not attend to later ones. " + HINT_CAUSAL
    )
    expect_close(w2[: POS + 1], w[: POS + 1], "weights of positions 0..2", hint)
    expect_close(out2[: POS + 1], out[: POS + 1], "outputs of positions 0..2", hint)


@points(2)
def test_permutation_equivariance(student):
    """without a mask, permuting the tokens of X permutes the outputs the same way"""
    out, w = attend(student, BASIC, "self-attention of 5 tokens")
    out_p, w_p = attend(student, PERMUTED, "self-attention of the same 5 tokens reordered")
    hint = (
        "Unmasked self-attention has no notion of order: reordering the tokens must "
        "reorder the output rows (and the weights' rows and columns) the same way. Is a "
        "mask applied although causal=False?"
    )
    expect_close(w_p, w[PERM][:, PERM], "weights of the reordered tokens", hint)
    expect_close(out_p, out[PERM], "outputs of the reordered tokens", hint)


@points(1)
def test_batched_input(student):
    """a causal (2, 4, 6) batch gives the same result as each sequence on its own"""
    hint = (
        "The sequence length is X.shape[-2], not X.shape[0], when X is a batch; the causal "
        "mask broadcasts over the batch. " + HINT_CAUSAL
    )
    with hinting(hint):
        batch = floats(student, BATCH, "a causal batch of shape (2, 4, 6)")
        for i, c in enumerate(SLICES):
            single = floats(student, c, f"sequence {i} of the batch on its own")
            expect_pair_slice(batch, LEAD, (i,), single, f"sequence {i}", hint)


@points(1)
def test_inputs_not_modified(student):
    """X and the weight matrices are left unchanged, and read-only inputs give the same result"""
    hint = "Build new arrays; do not update X or the weights in place."
    expect_unmodified(student, READONLY, hint, like=CAUSAL)
    expect_pair_readonly_twin(
        floats(student, CAUSAL, "causal self-attention of 5 tokens"),
        floats(student, READONLY, "the same call with read-only inputs"),
        hint,
    )


@points(0)
def test_same_with_your_cross_attention(passed_only_with_callees):
    """(0 points) your cross_attention, if self_attention calls it, costs no points here"""
    expect_same_with_graded_callees(FN, passed_only_with_callees, where="graded below")


@points(0)
def test_same_with_your_pasted_helpers(student, passed_only_with_course):
    """(0 points) your pasted helpers work here as the course's do"""
    expect_same_with_pasted_helpers(student, FN, passed_only_with_course)
