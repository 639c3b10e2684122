"""Grader for cross_attention(X, context, W_q, W_k, W_v, mask=None): 10 points."""

from contextlib import contextmanager

import numpy as np

from grader_tests import reference as ref
from grader_tests.harness import (
    Fail,
    call,
    expect_array,
    expect_close,
    expect_equal,
    expect_shape,
    expect_unmodified,
    points,
    rng,
)

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

HINT = (
    "Queries come from X (X @ W_q), keys and values from context (context @ W_k, "
    "context @ W_v): the weights are (seq_len_q, seq_len_k) = (len(X), len(context)) and "
    "the output (seq_len_q, d_v)."
)
HINT_MASK = (
    "Pass the mask on to scaled_dot_product_attention: True means FORBIDDEN, and "
    "forbidden weights are exactly 0."
)


def attend(
    student, c, what: str, hint: str = HINT, varies: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """The student's (output, weights) for call c, with the shapes and float dtype checked (and,
    unless told otherwise, an output that is not one value everywhere, as no real one is)."""
    out, w = student.pair(c)
    want_out, want_w = ref.cross_attention(*c.args, **c.kwargs)
    expect_shape(out, want_out.shape, f"output of {what}", hint)
    expect_shape(w, want_w.shape, f"weights of {what}", hint)
    expect_array(out, f"output of {what}")
    expect_array(w, f"weights of {what}")
    if varies and np.all(out == out.flat[0]):
        raise Fail(
            f"output of {what}: every entry is the same value, whatever the input: is it finished?"
        )
    return out, w


@contextmanager
def hinting(hint: str):
    """Add the hint to a failure inside, e.g. to "raised ValueError: ..." from the call itself."""
    try:
        yield
    except Fail as exc:
        if hint in str(exc):
            raise
        raise Fail(f"{exc} {hint}") from None


@points(2)
def test_queries_from_x_keys_from_context(student):
    """3 queries from X against 5 keys from context: weights (3, 5), output (3, d_v)"""
    attend(student, BASIC, "3 tokens of X attending to 5 tokens of context", varies=False)


def ranked(got, like: np.ndarray, what: str) -> np.ndarray:
    """A float array with as many dimensions as the contract's result `like` (the exact shape
    has a test of its own, so relational tests only need the rank)."""
    got = expect_array(got, what)
    if got.ndim != like.ndim:
        raise Fail(f"{what}: shape {got.shape}, expected {like.ndim} dimensions like {like.shape}")
    if got.size > 1 and np.all(got == got.flat[0]):
        raise Fail(f"{what}: every entry is the same value, whatever the input: is it finished?")
    return got


def floats(student, c, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The student's (output, weights) as float arrays of the right rank, for relational tests."""
    out, w = student.pair(c)
    want_out, want_w = ref.cross_attention(*c.args, **c.kwargs)
    return ranked(out, want_out, f"output of {what}"), ranked(w, want_w, f"weights of {what}")


def expect_slice(batch: np.ndarray, i: tuple, single: np.ndarray, what: str, hint: str) -> None:
    """Slice i of a batched result equals the result for that slice alone."""
    if batch.shape != (*LEAD, *single.shape):
        raise Fail(
            f"{what}: shape {batch.shape}, expected the batch dimensions {LEAD} followed by "
            f"the shape {single.shape} of the result for one slice. {hint}"
        )
    expect_close(batch[i], single, what, hint)


@points(2)
def test_values_match_reference(student):
    """output and weights of cross-attention match the reference"""
    out, w = attend(student, BASIC, "3 tokens of X attending to 5 tokens of context")
    want_out, want_w = ref.cross_attention(*BASIC.args)
    expect_close(w, want_w, "weights of 3 tokens of X attending to 5 of context", HINT)
    expect_close(out, want_out, "output of 3 tokens of X attending to 5 of context", HINT)


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
    expect_equal(
        w[MASK],
        np.zeros(int(MASK.sum()), dtype=w.dtype),
        "the weights at forbidden (mask True) positions",
        HINT_MASK,
    )
    _, w_full = attend(student, BASIC, "the same call without a mask")
    with np.errstate(all="ignore"):
        kept = np.where(MASK, 0.0, w_full)
        want = kept / kept.sum(axis=-1, keepdims=True)
    expect_close(
        w,
        want,
        "masked weights, against the unmasked weights renormalised over the allowed keys",
        HINT_MASK,
    )


@points(1)
def test_batched_input(student):
    """a batch, X (2, 3, 6) and context (2, 5, 6), equals each pair on its own"""
    hint = "Batches work when every product uses @ on the last two axes. " + HINT
    with hinting(hint):
        out, w = floats(student, BATCH, "a batch X (2, 3, 6) with context (2, 5, 6)")
        for i, c in enumerate(SLICES):
            out_i, w_i = floats(student, c, f"batch element {i} on its own")
            expect_slice(w, (i,), w_i, f"weights of batch element {i}, against it alone", hint)
            expect_slice(out, (i,), out_i, f"output of batch element {i}, against it alone", hint)


@points(1)
def test_inputs_not_modified(student):
    """X, context, the weights and the mask are left unchanged; read-only inputs work the same"""
    hint = "Build new arrays; do not update X, context, the weights or the mask in place."
    expect_unmodified(student, BASIC, hint)
    if student.outcome(MASKED).status == "ok":  # a failing masked call costs its own test
        expect_unmodified(student, MASKED, hint)
    out, w = floats(student, BASIC, "cross-attention of 3 tokens to 5")
    out_ro, w_ro = floats(student, READONLY, "the same call with read-only inputs")
    expect_close(w_ro, w, "weights for read-only inputs, against writable ones", hint)
    expect_close(out_ro, out, "output for read-only inputs, against writable ones", hint)
