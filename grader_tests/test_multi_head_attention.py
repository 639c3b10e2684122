"""Grader for multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
20 points."""

import numpy as np

from attention_course.grading.harness import (
    Fail,
    call,
    expect_array,
    expect_close,
    expect_not_constant,
    expect_pair_readonly_twin,
    expect_pair_slice,
    expect_shape,
    expect_unmodified,
    expect_zero_where,
    hinting,
    points,
    rng,
)

from . import reference as ref
from .graded_callees import expect_same_with_graded_callees
from .pasted_helpers import expect_same_with_pasted_helpers

FN = "multi_head_attention"
r = rng(801)


def weights(d_model: int) -> tuple:
    """W_q, W_k, W_v, W_o: random, so W_o is far from the identity."""
    return tuple(r.normal(size=(d_model, d_model)) * 0.6 for _ in range(4))


W = weights(8)
X = r.normal(size=(4, 8))
BASIC = call(FN, X, *W, 2)  # 2 heads of d_k 4
SCALE = call(FN, r.normal(size=(3, 8)) * 2, *weights(8), 4)  # 4 heads of d_k 2: sqrt 2 vs sqrt 8
CAUSAL = ref.causal_mask(4)
POS = 1  # with the causal mask, outputs up to this position must not see later tokens
X_LATER = X.copy()
X_LATER[POS + 1 :] = r.normal(size=(4 - POS - 1, 8)) * 3
MASKED = call(FN, X, *W, 2, mask=CAUSAL)
MASKED_LATER = call(FN, X_LATER, *W, 2, mask=CAUSAL)
X_CROSS, CONTEXT = r.normal(size=(3, 8)), r.normal(size=(5, 8))
PERM = np.array([3, 0, 4, 2, 1])
CROSS = call(FN, X_CROSS, *W, 2, context=CONTEXT)
CROSS_PERMUTED = call(FN, X_CROSS, *W, 2, context=CONTEXT[PERM])
LEAD = (2,)
X_BATCH = r.normal(size=(*LEAD, 4, 8))
BATCH = call(FN, X_BATCH, *W, 2)
SLICES = [call(FN, x, *W, 2) for x in X_BATCH]
READONLY = call(FN, X, *W, 2, mask=CAUSAL, readonly=True)  # MASKED, read-only
CROSS_READONLY = call(FN, X_CROSS, *W, 2, context=CONTEXT, readonly=True)  # CROSS, read-only
# Equal shapes, where a mix-up keeps every shape right and only the values show it:
# X and context of one shape (queries' sequence and context; W_q, W_k, W_v are all (8, 8));
CROSS_EQUAL = call(FN, r.normal(size=(4, 8)), *W, 2, context=r.normal(size=(4, 8)))
# as many heads as tokens (heads and positions: weights (2, 2, 2));
HEADS_EQUAL = call(FN, r.normal(size=(2, 8)), *W, 2)
# a batch of 2 sequences with 2 heads and one mask per sequence (batch and heads): the mask of
# sequence b must reach every head of sequence b, not head b of every sequence.
BATCH_MASK = np.stack([CAUSAL, ~CAUSAL & ~np.eye(4, dtype=bool)])
BATCH_MASK[1, :, 0] = False  # every query of sequence 1 may see key 0
BATCH_MASKED = call(FN, r.normal(size=(2, 4, 8)), *W, 2, mask=BATCH_MASK)

# Head pattern: tokens are one-hot (scaled by 4) in the first 4 columns. Head 0 (columns 0:4 of
# W_q, W_k) matches each token with itself; head 1 (columns 4:8) matches each token with the one
# before it (cyclically). Mixing or averaging heads blurs or moves these clear patterns.
X_PATTERN = np.zeros((4, 8))
X_PATTERN[:, :4] = 4 * np.eye(4)
X_PATTERN[:, 4:] = r.normal(size=(4, 4))
WQ_PATTERN = np.zeros((8, 8))
WQ_PATTERN[:4, :4] = np.eye(4)
WQ_PATTERN[:4, 4:] = np.eye(4)
WK_PATTERN = np.zeros((8, 8))
WK_PATTERN[:4, :4] = np.eye(4)
WK_PATTERN[:4, 4:] = np.roll(np.eye(4), 1, axis=1)
PATTERN = call(
    FN, X_PATTERN, WQ_PATTERN, WK_PATTERN, r.normal(size=(8, 8)), r.normal(size=(8, 8)), 2
)

HINT = (
    "Project (X @ W_q, source @ W_k, source @ W_v), split_heads each, attend per head, "
    "combine_heads, then @ W_o."
)
HINT_PER_HEAD = (
    "Return every head's weights, (..., num_heads, seq_len_q, seq_len_k); do not average or "
    "sum them over the heads."
)
HINT_HEADS = (
    "Each head must use only its own columns h*d_k:(h+1)*d_k of W_q, W_k, W_v: "
    "split_heads(X @ W_q, num_heads) gives (..., num_heads, seq_len, d_k). Are the "
    "heads mixed by a reshape without the axis swap, or averaged?"
)
HINT_CONTEXT = (
    "With context given, queries come from X and keys and values from context "
    "(context @ W_k, context @ W_v): weights (num_heads, len(X), len(context)). " + HINT
)


def output_and_weights(student, c, what: str, hint: str = HINT) -> tuple[np.ndarray, np.ndarray]:
    """The student's output (shape checked) and weights (a float array, shape not checked: the
    per-head shape has a test of its own, the other tests judge what they can)."""
    out, w = student.pair(c)
    want_out = ref.multi_head_attention(*c.args, **c.kwargs)[0]
    expect_shape(out, want_out.shape, f"output of {what}", hint)
    out = expect_not_constant(expect_array(out, f"output of {what}"), f"output of {what}")
    return out, expect_array(w, f"weights of {what}")


def per_head(student, c, what: str, hint: str) -> np.ndarray:
    """The student's weights, which must have the per-head shape."""
    w = student.pair(c)[1]
    want_w = ref.multi_head_attention(*c.args, **c.kwargs)[1]
    expect_shape(w, want_w.shape, f"weights of {what}", hint)
    return expect_array(w, f"weights of {what}")


@points(3)
def test_values_match_reference(student):
    """2 heads on 4 tokens of width 8: the output matches the reference"""
    out, _ = output_and_weights(student, BASIC, "2-head attention of a (4, 8) X")
    expect_close(
        out,
        ref.multi_head_attention(*BASIC.args)[0],
        "output of 2-head attention of a (4, 8) X",
        HINT,
    )


@points(2)
def test_weights_per_head(student):
    """weights are per head (num_heads, seq_len_q, seq_len_k), also with as many heads as tokens"""
    per_head(student, BASIC, "2-head attention of a (4, 8) X", HINT_PER_HEAD)
    what = "2-head attention of 2 tokens (as many heads as tokens)"
    w = per_head(student, HEADS_EQUAL, what, HINT_PER_HEAD)
    expect_close(
        w,
        ref.multi_head_attention(*HEADS_EQUAL.args)[1],
        f"weights of {what}",
        "With as many heads as tokens the shape cannot tell the head axis from the query "
        "axis: weights[h, i, j] is how much query i of head h attends to key j. " + HINT_PER_HEAD,
    )


@points(3)
def test_heads_attend_independently(student):
    """head-pattern test: head 0 attends to each token itself, head 1 to the previous token"""
    w = per_head(student, PATTERN, "2-head attention built with one pattern per head", HINT_HEADS)
    want_w = ref.multi_head_attention(*PATTERN.args)[1]
    for h in range(2):
        if np.isnan(w[h]).any() or not np.array_equal(
            np.argmax(w[h], axis=-1), np.argmax(want_w[h], axis=-1)
        ):
            raise Fail(
                f"head {h} does not attend where its own columns of W_q and W_k point "
                "(they were built so that each head has a clear, different pattern). " + HINT_HEADS
            )


@points(3)
def test_scaled_by_head_d_k(student):
    """4 heads of d_k = 2 on d_model = 8: each head's scores are divided by sqrt(2), not sqrt(8)"""
    hint = (
        "Each head scales its scores by sqrt of ITS d_k = d_model // num_heads, which "
        "scaled_dot_product_attention takes from Q.shape[-1] of the head, not by "
        "sqrt(d_model). " + HINT_HEADS
    )
    out, w = output_and_weights(student, SCALE, "4-head attention of a (3, 8) X", hint)
    want_out, want_w = ref.multi_head_attention(*SCALE.args)
    if w.shape == want_w.shape:
        expect_close(w, want_w, "weights of 4-head attention (d_model 8, d_k 2)", hint)
    else:  # weights not per head (test_weights_per_head): judge the scaling on the output
        expect_close(out, want_out, "output of 4-head attention (d_model 8, d_k 2)", hint)


@points(3)
def test_output_projected_by_w_o(student):
    """the output is the heads' results, concatenated in order, times W_o"""
    hint = (
        "The output is combine_heads(per-head outputs) @ W_o: the heads concatenated in "
        "order, then projected by W_o (a (d_model, d_model) matrix, not the identity)."
    )
    out, w = output_and_weights(student, BASIC, "2-head attention of a (4, 8) X", hint)
    X, _, _, W_v, W_o, num_heads = BASIC.args
    want_w = ref.multi_head_attention(*BASIC.args)[1]
    # Judge the projection on the student's own weights when they are usable, so a weights
    # mistake (tested elsewhere) does not also cost these points.
    usable = w.shape == want_w.shape and np.isfinite(w).all()
    heads = (w if usable else want_w) @ ref.split_heads(X @ W_v, num_heads)
    expect_close(out, ref.combine_heads(heads) @ W_o, "output of 2-head attention", hint)


@points(2)
def test_mask_applies_to_every_head(student):
    """a mask reaches every head: causal (later tokens do not leak), and one mask per sequence"""
    hint = (
        "The same mask applies to every head: pass it to scaled_dot_product_attention with "
        "the (..., num_heads, seq_len, d_k) heads; it broadcasts over the head axis."
    )
    out, w = output_and_weights(student, MASKED, "2-head causal attention of a (4, 8) X", hint)
    heads = w if w.ndim == 3 else w[None]  # averaged weights cost test_weights_per_head only
    if heads.ndim != 3 or heads.shape[-2:] != (4, 4):
        raise Fail(
            f"weights of 2-head causal attention: shape {w.shape}, expected (2, 4, 4). {hint}"
        )
    for h, w_h in enumerate(heads):
        expect_zero_where(
            w_h, CAUSAL, f"head {h}'s weights at forbidden (mask True) positions", hint
        )
    out2, _ = output_and_weights(student, MASKED_LATER, "2-head causal attention", hint)
    expect_close(
        out2[: POS + 1],
        out[: POS + 1],
        "outputs of positions 0..1 when later tokens change",
        "A head still attends to later tokens. " + hint,
    )
    what = "a batch of 2 sequences, 2 heads, one (4, 4) mask per sequence"
    hint_batch = (
        "A mask of shape (batch, seq_len_q, seq_len_k) has no head axis: broadcast as it is "
        "against the (batch, num_heads, seq_len_q, seq_len_k) scores, its batch axis lines up "
        "with the head axis, and sequence b's mask lands on head b of every sequence "
        "(exercise contract: the mask applies to every head). " + hint
    )
    out, w = output_and_weights(student, BATCH_MASKED, what, hint_batch)
    want_out, want_w = ref.multi_head_attention(*BATCH_MASKED.args, **BATCH_MASKED.kwargs)
    if w.shape == want_w.shape:  # (weights not per head cost test_weights_per_head only)
        for b in range(2):
            for h in range(2):
                expect_zero_where(
                    w[b, h],
                    BATCH_MASK[b],
                    f"weights of head {h} of sequence {b} where its mask is True",
                    hint_batch,
                )
    expect_close(out, want_out, f"output of {what}", hint_batch)


@points(2)
def test_context_gives_cross_attention(student):
    """context=: queries from X, keys and values from context (also when both have one shape)"""
    what = "2-head attention of a (3, 8) X to a (5, 8) context"
    out, w = output_and_weights(student, CROSS, what, HINT_CONTEXT)
    if w.shape[-2:] != (3, 5):
        raise Fail(
            f"weights of {what}: shape {w.shape}, expected (..., 3, 5), one row per token of X "
            "and one column per token of context. " + HINT_CONTEXT
        )
    out_p, w_p = output_and_weights(student, CROSS_PERMUTED, "the same, context reordered")
    hint = (
        "Each query's output is a weighted sum over the context, so reordering the context "
        "rows must leave it unchanged (only the weights' columns move). " + HINT_CONTEXT
    )
    expect_close(w_p, w[..., PERM], "weights with the context reordered", hint)
    expect_close(out_p, out, "outputs with the context reordered", hint)
    what = "2-head attention of a (4, 8) X to a (4, 8) context"
    hint = (
        "X and context have the same shape here, and W_q, W_k, W_v are all (8, 8): only the "
        "values show which sequence and which matrix was used. " + HINT_CONTEXT
    )
    out, w = output_and_weights(student, CROSS_EQUAL, what, hint)
    want_out, want_w = ref.multi_head_attention(*CROSS_EQUAL.args, **CROSS_EQUAL.kwargs)
    if w.shape == want_w.shape:  # (weights not per head cost test_weights_per_head only)
        expect_close(w, want_w, f"weights of {what}", hint)
    expect_close(out, want_out, f"output of {what}", hint)


@points(1)
def test_batched_input(student):
    """a (2, 4, 8) batch gives, sequence by sequence, the result of each sequence alone"""
    hint = (
        "split_heads and combine_heads must work on the last axes only, so batches "
        "keep their leading dimension. " + HINT
    )
    with hinting(hint):
        batch = output_and_weights(student, BATCH, "2-head attention of a (2, 4, 8) batch", hint)
        for i, c in enumerate(SLICES):
            single = output_and_weights(student, c, f"sequence {i} of the batch on its own")
            expect_pair_slice(batch, LEAD, (i,), single, f"sequence {i}", hint, "the batch")


@points(1)
def test_inputs_not_modified(student):
    """X, context, the weight matrices and the mask are left unchanged; read-only inputs work"""
    hint = "Build new arrays; do not update X, context, the weights or the mask in place."
    expect_unmodified(student, READONLY, hint, like=MASKED)
    expect_unmodified(student, CROSS_READONLY, hint, like=CROSS)
    expect_pair_readonly_twin(
        output_and_weights(student, MASKED, "2-head causal attention"),
        output_and_weights(student, READONLY, "the same call with read-only inputs"),
        hint,
    )


@points(0)
def test_same_with_your_split_and_combine_heads(passed_only_with_callees):
    """(0 points) your split_heads and combine_heads, graded above, cost no points here"""
    expect_same_with_graded_callees(FN, passed_only_with_callees)


@points(0)
def test_same_with_your_pasted_helpers(student, passed_only_with_course):
    """(0 points) your pasted helpers work here as the course's do"""
    expect_same_with_pasted_helpers(student, FN, passed_only_with_course)
