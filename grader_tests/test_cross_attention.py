"""Grader for cross_attention(X, context, W_q, W_k, W_v, mask=None): 10 points."""

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
    explain_shape_errors,
    hinting,
    points,
    renormalised,
    rng,
)

from . import reference as ref
from .pasted_helpers import expect_same_with_pasted_helpers

FN = "cross_attention"
r = rng(501)
# 3 queries from X, 5 keys/values from context, both of width 6; d_k 4, d_v 2.
W = (r.normal(size=(6, 4)) * 0.7, r.normal(size=(6, 4)) * 0.7, r.normal(size=(6, 2)))
X = r.normal(size=(3, 6))
CONTEXT = r.normal(size=(5, 6))
PERM = np.array([2, 4, 0, 3, 1])
MASK = np.array(
    [
        [True, False, False, True, False],
        [False, True, True, False, False],
        [True, True, False, True, True],
    ]
)

BASIC = call(FN, X, CONTEXT, *W)
PERMUTED = call(FN, X, CONTEXT[PERM], *W)
MASKED = call(FN, X, CONTEXT, *W, mask=MASK)  # the same X and context as BASIC
X_BATCH, CONTEXT_BATCH = r.normal(size=(2, 3, 6)), r.normal(size=(2, 5, 6))
BATCH = call(FN, X_BATCH, CONTEXT_BATCH, *W)
LEAD = (2,)
SLICES = [call(FN, X_BATCH[i], CONTEXT_BATCH[i], *W) for i in range(2)]
READONLY = call(FN, X, CONTEXT, *W, readonly=True)  # BASIC, read-only
MASKED_READONLY = call(FN, X, CONTEXT, *W, mask=MASK, readonly=True)  # MASKED, read-only
# X and context of one shape, W_q, W_k, W_v of one shape: queries from context, values from X,
# or W_k for W_v keep every shape right, so only the values show the mix-up.
EQUAL = call(
    FN,
    r.normal(size=(4, 6)),
    r.normal(size=(4, 6)),
    *(r.normal(size=(6, 6)) * 0.5 for _ in range(3)),
)

HINT = (
    "Queries come from X (X @ W_q), keys and values from context (context @ W_k, "
    "context @ W_v): the weights are (seq_len_q, seq_len_k) = (len(X), len(context)) and "
    "the output (seq_len_q, d_v)."
)
HINT_MASK = (
    "Pass the mask on to scaled_dot_product_attention: True means FORBIDDEN, and "
    "forbidden weights are exactly 0."
)


def _shape_property(c, shapes) -> str:
    """What a shape mismatch inside cross_attention breaks: the two sequences' lengths."""
    X, context = c.args[0], c.args[1]
    n_q, n_k = X.shape[-2], context.shape[-2]
    text = (
        f"Here seq_len_q = {n_q} (the rows of X) and seq_len_k = {n_k} (the rows of context): "
        f"every array built from the keys has {n_k} rows, the scores and the weights are "
        f"({n_q}, {n_k}), and so is any mask."
    )
    if any(s[-2:] == (n_q, n_q) for s in shapes) and n_q != n_k:
        text += (
            f" A ({n_q}, {n_q}) array, square in the queries, meets them: is there a mask the "
            "call did not ask for (mask=None means no mask at all; cross-attention has no "
            "causal default), or keys taken from X?"
        )
    return text + " (Exercise contract: Conventions, widths and lengths may differ.)"


explain_shape_errors(FN, _shape_property)

# attend: (output, weights) with their exact shapes; floats: only their ranks, for relational
# tests (see PairReader).
READER = PairReader(ref.cross_attention, HINT)
attend, floats = READER.checked, READER.ranked


@points(2)
def test_queries_from_x_keys_from_context(student):
    """3 queries from X against 5 keys from context: weights (3, 5), output (3, d_v)"""
    attend(student, BASIC, "3 tokens of X attending to 5 tokens of context", varies=False)


@points(2)
def test_values_match_reference(student):
    """output and weights match the reference, also when X and context have one shape"""
    got = attend(student, BASIC, "3 tokens of X attending to 5 tokens of context")
    want = ref.cross_attention(*BASIC.args)
    expect_pair_close(got, want, "of 3 tokens of X attending to 5 of context", HINT)
    got = attend(student, EQUAL, "4 tokens of X attending to 4 tokens of context")
    want = ref.cross_attention(*EQUAL.args)
    hint = (
        "X and context have the same shape here, and so do W_q, W_k and W_v: only the values "
        "show which sequence and which matrix was used. " + HINT
    )
    expect_pair_close(got, want, "when X and context both have shape (4, 6)", hint)


@points(2)
def test_context_order_does_not_matter(student):
    """reordering the context rows leaves the outputs unchanged (weights' columns reorder)"""
    out, w = attend(student, BASIC, "3 tokens of X attending to 5 tokens of context")
    out_p, w_p = attend(student, PERMUTED, "the same call with the context reordered")
    hint = (
        "The output of each query is a weighted sum over the context, so the order of the "
        "context rows must not matter; only the weights' columns move with them. " + HINT
    )
    expect_close(w_p, w[:, PERM], "weights with the context reordered", hint)
    expect_close(out_p, out, "outputs with the context reordered", hint)


@points(2)
def test_mask_is_applied(student):
    """a (3, 5) mask: forbidden weights are exactly 0, the rest renormalised"""
    _, w = attend(student, MASKED, "a masked cross-attention call")
    expect_zero_where(w, MASK, "the weights at forbidden (mask True) positions", HINT_MASK)
    _, w_full = attend(student, BASIC, "the same call without a mask")
    expect_close(
        w,
        renormalised(w_full, MASK),
        "masked weights, against the unmasked weights renormalised over the allowed keys",
        HINT_MASK,
    )


@points(1)
def test_batched_input(student):
    """a batch, X (2, 3, 6) and context (2, 5, 6), equals each pair on its own"""
    hint = "Batches work when every product uses @ on the last two axes. " + HINT
    with hinting(hint):
        batch = floats(student, BATCH, "a batch X (2, 3, 6) with context (2, 5, 6)")
        for i, c in enumerate(SLICES):
            single = floats(student, c, f"batch element {i} on its own")
            expect_pair_slice(batch, LEAD, (i,), single, f"batch element {i}", hint)


@points(1)
def test_inputs_not_modified(student):
    """X, context, the weights and the mask are left unchanged; read-only inputs work the same"""
    hint = "Build new arrays; do not update X, context, the weights or the mask in place."
    expect_unmodified(student, READONLY, hint, like=BASIC)
    expect_pair_readonly_twin(
        floats(student, BASIC, "cross-attention of 3 tokens to 5"),
        floats(student, READONLY, "the same call with read-only inputs"),
        hint,
    )
    if student.outcome(MASKED).status == "ok":  # a failing masked call costs its own test
        expect_unmodified(student, MASKED_READONLY, hint, like=MASKED)


@points(0)
def test_same_with_your_pasted_helpers(student, passed_only_with_course):
    """(0 points) your pasted helpers work here as the course's do"""
    expect_same_with_pasted_helpers(student, FN, passed_only_with_course)
