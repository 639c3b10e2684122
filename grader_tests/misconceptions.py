"""The classic mistakes of each graded function, as models the feedback can name.

Each model is the reference with one mistake made, declared with what the code then does, the
idea it misses (never the finished code) and the section of docs/exercise-contract.md that says
it. A failing test names the mistake whose model gives exactly what the student's function gave
on that test's inputs, wherever it differs from the reference (attention_course/grading/
diagnosis.py). A model that is only a symptom of the student's result (a dict lacking a key)
says so with `symptom=True`.
"""

from __future__ import annotations

import numpy as np

from attention_course.grading.diagnosis import Models

from . import reference as ref

MODELS = Models()
model = MODELS.model

# ---------------------------------------------------------------------------------- softmax

SHIFT = (
    "A stable softmax subtracts each slice's own maximum before np.exp: every exponent is then "
    "at most 0, so nothing overflows, and the largest is exactly 0, so no slice underflows "
    "to 0 / 0."
)


def _softmax_shifted(z, axis, shift):
    """exp(z - shift) normalised along `axis` (no guard: what such code does)."""
    e = np.exp(z - shift)
    return e / np.sum(e, axis=axis, keepdims=True)


@model(
    "softmax",
    "no_shift",
    did="takes np.exp of the scores as they are",
    idea=SHIFT,
    section="softmax",
)
def softmax_no_shift(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    return _softmax_shifted(z, axis, 0.0)


@model(
    "softmax",
    "shift_by_min",
    did="subtracts each slice's minimum, not its maximum",
    idea=SHIFT,
    section="softmax",
)
def softmax_shift_by_min(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    return _softmax_shifted(z, axis, np.min(z, axis=axis, keepdims=True))


@model(
    "softmax",
    "shift_by_mean",
    did="subtracts each slice's mean, not its maximum",
    idea=SHIFT,
    section="softmax",
)
def softmax_shift_by_mean(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    return _softmax_shifted(z, axis, np.mean(z, axis=axis, keepdims=True))


@model(
    "softmax",
    "global_max",
    did="subtracts the maximum of the whole array, not of each slice",
    idea="Slices far below the whole array's maximum then underflow to 0 / 0. " + SHIFT,
    section="softmax",
)
def softmax_global_max(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    top = np.max(z)
    return _softmax_shifted(z, axis, top if np.isfinite(top) else 0.0)


KEEPDIMS = (
    "The maximum and the sum of each slice must line up with the slice they came from: "
    "keepdims=True keeps the reduced axis (of length 1), so they broadcast back along `axis`; "
    "without it they broadcast along another axis, or not at all."
)


@model(
    "softmax",
    "max_without_keepdims",
    did="takes the maximum and the sum without keepdims=True",
    idea=KEEPDIMS,
    section="softmax",
)
def softmax_without_keepdims(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis))
    return e / np.sum(e, axis=axis)


@model(
    "softmax",
    "max_without_keepdims",
    did="takes the maximum and the sum without keepdims=True",
    idea=KEEPDIMS,
    section="softmax",
)
def softmax_sum_without_keepdims(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis)


AXIS = (
    "softmax normalises along `axis`, whatever the number of dimensions: -1 (the default) is the "
    "last axis of a 1-D, 2-D or 3-D input alike."
)


@model(
    "softmax",
    "fixed_axis",
    did="normalises along axis 0 whatever `axis` says",
    idea=AXIS,
    section="softmax",
)
def softmax_over_axis0(z, axis=-1):
    return ref.softmax(z, axis=0)


@model(
    "softmax",
    "fixed_axis",
    did="normalises along the last axis whatever `axis` says",
    idea=AXIS,
    section="softmax",
)
def softmax_ignores_axis(z, axis=-1):
    return ref.softmax(z, axis=-1)


@model(
    "softmax",
    "last_axis_is_1",
    did="takes the last axis to be axis 1, as it is for a matrix",
    idea=AXIS + " Batches add leading axes: the last one is -1, not 1.",
    section="softmax",
)
def softmax_axis_one_for_last(z, axis=-1):
    return ref.softmax(z, axis=1 if axis == -1 else axis)


ALL_INF = (
    "A slice of only -inf (a query whose every key is forbidden) has maximum -inf, and "
    "-inf - (-inf) is NaN: such a slice is shifted by 0 instead, and its sum, 0, is not divided "
    "by. Its weights are 0, not NaN and not equal."
)


@model(
    "softmax",
    "unguarded_all_inf",
    did="shifts a slice of only -inf by its maximum, -inf, which gives NaN",
    idea=ALL_INF,
    section="Conventions, a fully masked row",
)
def softmax_unguarded(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    return _softmax_shifted(z, axis, np.max(z, axis=axis, keepdims=True))


@model(
    "softmax",
    "neg_inf_to_zero",
    did="replaces -inf scores by 0 before the softmax",
    idea="A score of -inf must keep weight exactly 0: as 0 it gets a weight like any other. "
    + ALL_INF,
    section="Conventions, a fully masked row",
)
def softmax_neg_inf_to_zero(z, axis=-1):
    z = np.where(np.isneginf(z), 0.0, np.asarray(z, dtype=np.float64))
    return ref.softmax(z, axis)


PRECISION = (
    "float64 inputs are computed in float64: scores far from 0 that differ by little lose their "
    "differences in float32 or float16, even when the result is cast back."
)


@model(
    "softmax",
    "lower_precision",
    did="computes in float32",
    idea=PRECISION,
    section="Conventions, float64",
    rtol=2e-4,
    atol=1e-7,
)
def softmax_float32(z, axis=-1):
    return ref.softmax(np.asarray(z, dtype=np.float32).astype(np.float32), axis).astype(np.float64)


@model(
    "softmax",
    "lower_precision",
    did="computes in float16",
    idea=PRECISION,
    section="Conventions, float64",
    rtol=2e-2,
    atol=1e-4,
)
def softmax_float16(z, axis=-1):
    z = np.asarray(z, dtype=np.float16)
    m = np.max(z, axis=axis, keepdims=True)
    e = np.exp(z - np.where(np.isfinite(m), m, 0))
    total = np.sum(e, axis=axis, keepdims=True)
    return (e / np.where(total > 0, total, 1)).astype(np.float64)


@model(
    "softmax",
    "probability_floor",
    did="mixes a small floor into every weight",
    idea="Weights must be exactly what the softmax gives: a floor makes the weights that "
    "must be 0 (of -inf scores) positive, and moves every other one a little.",
    section="softmax",
)
def softmax_floor(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    p = ref.softmax(z, axis)
    n = z.shape[axis] if z.ndim else 1
    return (1 - 1e-5) * p + 1e-5 / n


@model(
    "softmax",
    "result_in_input_dtype",
    did="builds its result in an array of the input's dtype (np.zeros_like(z), say)",
    idea="Weights are fractions: integer scores still give float64 weights, so the result "
    "is made as a float array whatever the scores' dtype.",
    section="Conventions, float64",
)
def softmax_in_input_dtype(z, axis=-1):
    z = np.asarray(z)
    return ref.softmax(z, axis).astype(z.dtype)


@model(
    "softmax",
    "in_place",
    did="shifts, exponentiates and normalises the input array in place",
    idea="The caller's array must be left as it was: it may be used again, or be read-only, "
    "or hold integers, which cannot take the fractions written into them. Build the result in "
    "new arrays.",
    section="Conventions, pure functions",
)
def softmax_in_place(z, axis=-1):
    m = np.max(z, axis=axis, keepdims=True)
    z -= np.where(np.isfinite(m), m, 0.0)
    np.exp(z, out=z)
    total = np.sum(z, axis=axis, keepdims=True)
    z /= np.where(total > 0, total, 1.0)
    return z


# ---------------------------------------------------------------- scaled_dot_product_attention

SDPA = "scaled_dot_product_attention"
SCALE = (
    "The scores Q K^T are divided by sqrt(d_k), d_k = Q.shape[-1] being the width of the queries "
    "and keys: a dot product of d_k terms grows like sqrt(d_k), and dividing by it keeps the "
    "softmax from saturating however wide the keys are."
)
MASK = (
    "A mask is True where a key is FORBIDDEN; a forbidden score becomes -inf before the softmax, "
    "so its weight is exactly 0 and the allowed weights of its row still sum to 1."
)


def _sdpa(Q, K, V, mask=None, *, scale=None, fill=-np.inf, axis=-1):
    """Attention with the choices a mistake changes: the scale, the value of a forbidden
    score, the axis of the softmax."""
    scale = np.sqrt(Q.shape[-1]) if scale is None else scale
    scores = Q @ np.swapaxes(K, -1, -2) / scale  # (..., seq_q, seq_k)
    if mask is not None:
        scores = np.where(mask, fill, scores)
    weights = ref.softmax(scores, axis=axis)
    return weights @ V, weights


@model(
    SDPA,
    "no_scaling",
    did="does not divide the scores by sqrt(d_k)",
    idea=SCALE,
    section="scaled_dot_product_attention",
)
def sdpa_no_scaling(Q, K, V, mask=None):
    return _sdpa(Q, K, V, mask, scale=1.0)


@model(
    SDPA,
    "scaled_by_d_k",
    did="divides the scores by d_k, not by its square root (or by sqrt(d_k) twice)",
    idea=SCALE,
    section="scaled_dot_product_attention",
)
def sdpa_scaled_by_d_k(Q, K, V, mask=None):
    return _sdpa(Q, K, V, mask, scale=Q.shape[-1])


@model(
    SDPA,
    "scale_from_other_width",
    did="takes the scale from another width than the queries' (the values' d_v)",
    idea=SCALE,
    section="scaled_dot_product_attention",
)
def sdpa_scale_by_d_v(Q, K, V, mask=None):
    return _sdpa(Q, K, V, mask, scale=np.sqrt(V.shape[-1]))


@model(
    SDPA,
    "scale_from_other_width",
    did="takes d_k from the first axis of Q (the number of queries, or the batch), not its last",
    idea=SCALE,
    section="scaled_dot_product_attention",
)
def sdpa_d_k_from_first_axis(Q, K, V, mask=None):
    return _sdpa(Q, K, V, mask, scale=np.sqrt(Q.shape[0]))


@model(
    SDPA,
    "softmax_over_queries",
    did="takes the softmax over the queries (axis -2), not the keys",
    idea="Each query spreads its attention over the keys: the weights of one query, a row, "
    "sum to 1, so the softmax runs along the last axis, that of the keys.",
    section="scaled_dot_product_attention",
)
def sdpa_softmax_over_queries(Q, K, V, mask=None):
    return _sdpa(Q, K, V, mask, axis=-2)


@model(
    SDPA,
    "mask_inverted",
    did="forbids the keys where the mask is False (True taken as allowed)",
    idea=MASK + " That is PyTorch's nn.MultiheadAttention convention; "
    "F.scaled_dot_product_attention reads a mask the other way round.",
    section="Conventions, a mask",
)
def sdpa_mask_inverted(Q, K, V, mask=None):
    return _sdpa(Q, K, V, None if mask is None else ~np.asarray(mask, dtype=bool))


@model(SDPA, "mask_ignored", did="never uses the mask", idea=MASK, section="Conventions, a mask")
def sdpa_mask_ignored(Q, K, V, mask=None):
    return _sdpa(Q, K, V)


@model(
    SDPA,
    "mask_after_softmax",
    did="applies the mask to the weights after the softmax, not to the scores before it",
    idea=MASK + " Weights zeroed after the softmax no longer sum to 1; renormalised, a fully "
    "masked row becomes 0 / 0.",
    section="Conventions, a mask",
)
def sdpa_mask_after_softmax(Q, K, V, mask=None):
    _, weights = _sdpa(Q, K, V)
    if mask is not None:
        weights = weights * ~np.asarray(mask, dtype=bool)
    return weights @ V, weights


@model(
    SDPA,
    "mask_after_softmax",
    did="applies the mask to the weights after the softmax, then renormalises them",
    idea=MASK + " Weights zeroed after the softmax no longer sum to 1; renormalised, a fully "
    "masked row becomes 0 / 0.",
    section="Conventions, a mask",
)
def sdpa_mask_after_softmax_renormalised(Q, K, V, mask=None):
    _, weights = _sdpa(Q, K, V)
    if mask is not None:
        weights = weights * ~np.asarray(mask, dtype=bool)
        weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights


FINITE = (
    "A forbidden score must be -inf, so that its weight is exactly 0: with a finite score "
    "(0, or -1e9) it keeps a weight, and a row whose every key is forbidden becomes uniform "
    "instead of all zeros."
)


@model(
    SDPA,
    "finite_mask_value",
    did="gives forbidden scores a large finite value (-1e9) instead of -inf",
    idea=FINITE,
    section="Conventions, a fully masked row",
)
def sdpa_mask_minus_1e9(Q, K, V, mask=None):
    return _sdpa(Q, K, V, mask, fill=-1e9)


@model(
    SDPA,
    "finite_mask_value",
    did="gives forbidden scores the value 0 instead of -inf",
    idea=FINITE,
    section="Conventions, a mask",
)
def sdpa_mask_zero_scores(Q, K, V, mask=None):
    return _sdpa(Q, K, V, mask, fill=0.0)


@model(
    SDPA,
    "mask_transposed",
    did="reads the mask as (key, query), transposed",
    idea="Entry (i, j) of a mask forbids query i to see key j: its shape is "
    "(..., seq_len_q, seq_len_k), like the scores'.",
    section="Conventions, a mask",
)
def sdpa_mask_transposed(Q, K, V, mask=None):
    return _sdpa(Q, K, V, None if mask is None else np.swapaxes(mask, -1, -2))


BOOLEAN_INDEX = (
    "A mask broadcasts to the scores (..., seq_len_q, seq_len_k): one mask for every batch "
    "element and head, a key mask (seq_len_k,), a (batch, 1, seq_len_q, seq_len_k) mask. "
    "Indexing the scores with the mask fits only a mask of the scores' own shape; choosing "
    "between the scores and -inf elementwise fits every broadcastable one."
)


@model(
    SDPA,
    "mask_as_boolean_index",
    did="indexes the scores with the mask (scores[mask] = -inf)",
    idea=BOOLEAN_INDEX,
    section="Conventions, a mask",
)
def sdpa_mask_by_boolean_index(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores[mask] = -np.inf
    weights = ref.softmax(scores, axis=-1)
    return weights @ V, weights


@model(
    SDPA,
    "mask_as_boolean_index",
    did="indexes the last two axes of the scores with the mask (scores[..., mask] = -inf)",
    idea=BOOLEAN_INDEX,
    section="Conventions, a mask",
)
def sdpa_mask_by_trailing_index(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores[..., mask] = -np.inf
    weights = ref.softmax(scores, axis=-1)
    return weights @ V, weights


BATCH_AXES = (
    "Every function also takes leading batch axes (..., seq_len, d): K^T swaps the last two axes "
    "only (np.swapaxes(K, -1, -2)); a transpose of every axis (K.T) mixes the batch into the "
    "keys."
)


@model(
    SDPA,
    "transpose_all_axes",
    did="transposes K with .T, which reverses every axis of a batch",
    idea=BATCH_AXES,
    section="Conventions, batches",
)
def sdpa_k_transpose(Q, K, V, mask=None):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = ref.softmax(scores, axis=-1)
    return weights @ V, weights


@model(
    SDPA,
    "mixes_keys_not_values",
    did="mixes the keys (weights @ K) instead of the values",
    idea="The weights say how much of each VALUE a query takes: the output is weights @ V, "
    "of width d_v.",
    section="scaled_dot_product_attention",
)
def sdpa_output_from_keys(Q, K, V, mask=None):
    _, weights = _sdpa(Q, K, V, mask)
    return weights @ K, weights


@model(
    SDPA,
    "returns_wrong_order",
    did="returns (weights, output), not (output, weights)",
    idea="The contract fixes the order of what is returned, so that every caller can "
    "unpack it the same way: (output, weights).",
    section="scaled_dot_product_attention",
)
def sdpa_returns_weights_first(Q, K, V, mask=None):
    out, weights = _sdpa(Q, K, V, mask)
    return weights, out


@model(
    SDPA,
    "lower_precision",
    did="computes in float32",
    idea=PRECISION,
    section="Conventions, float64",
    rtol=2e-5,
    atol=1e-7,
)
def sdpa_float32(Q, K, V, mask=None):
    Q, K, V = (np.asarray(A, dtype=np.float32) for A in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.float32(np.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = ref.softmax(scores, axis=-1)
    return (weights @ V.astype(np.float64)), weights


@model(
    SDPA,
    "no_shift",
    did="takes np.exp of the scores as they are, without the maximum shift",
    idea=SHIFT,
    section="softmax",
)
def sdpa_unshifted_softmax(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax_no_shift(scores, axis=-1)
    return weights @ V, weights


@model(
    SDPA,
    "unguarded_all_inf",
    did="shifts a row of only -inf scores by its maximum, -inf, which gives NaN",
    idea=ALL_INF,
    section="Conventions, a fully masked row",
)
def sdpa_unguarded(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax_unguarded(scores, axis=-1)
    return weights @ V, weights


@model(
    SDPA,
    "in_place",
    did="scales or masks an input array in place",
    idea="The caller's arrays must be left as they were: they may be used again, or be "
    "read-only. Build the scaled scores in new arrays.",
    section="Conventions, pure functions",
)
def sdpa_scales_q_in_place(Q, K, V, mask=None):
    Q /= np.sqrt(Q.shape[-1])
    return _sdpa(Q, K, V, mask, scale=1.0)


# ------------------------------------------------------------------------------- create_qkv

ROLES = (
    "Queries, keys and values are three projections of the same X, each by its own matrix: "
    "Q = X W_q, K = X W_k, V = X W_v, returned in that order. The values' width d_v may differ "
    "from d_k."
)


@model(
    "create_qkv",
    "roles_swapped",
    did="projects the queries with W_k and the keys with W_q",
    idea=ROLES,
    section="create_qkv",
)
def qkv_roles_swapped(X, W_q, W_k, W_v):
    return X @ W_k, X @ W_q, X @ W_v


@model(
    "create_qkv",
    "values_from_wrong_matrix",
    did="projects the values with W_k, not W_v",
    idea=ROLES,
    section="create_qkv",
)
def qkv_values_from_w_k(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_k


@model(
    "create_qkv",
    "values_from_wrong_matrix",
    did="projects the values with W_q, not W_v",
    idea=ROLES,
    section="create_qkv",
)
def qkv_values_from_w_q(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_q


@model(
    "create_qkv",
    "returns_wrong_order",
    did="returns the three projections in another order",
    idea=ROLES,
    section="create_qkv",
)
def qkv_order_qvk(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_v, X @ W_k


@model(
    "create_qkv",
    "two_dimensional_only",
    did="multiplies with an einsum written for one sequence ('ij,jk->ik')",
    idea=BATCH_AXES.replace(
        "K^T swaps the last two axes only (np.swapaxes(K, -1, -2)); a "
        "transpose of every axis (K.T) mixes the batch into the keys.",
        "X @ W multiplies along the last axis whatever comes before it.",
    ),
    section="Conventions, batches",
)
def qkv_einsum_2d(X, W_q, W_k, W_v):
    return tuple(np.einsum("ij,jk->ik", X, W) for W in (W_q, W_k, W_v))


# ------------------------------------------------------------------------------ causal_mask

CAUSAL = (
    "The causal mask marks what is FORBIDDEN: token i may see tokens 0..i, itself included, so "
    "the mask is True strictly above the diagonal and False on and below it."
)


@model(
    "causal_mask",
    "causal_wrong_triangle",
    did="marks the lower triangle (what a token may see) instead of what it may not",
    idea=CAUSAL,
    section="causal_mask",
)
def causal_tril(seq_len):
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))


@model(
    "causal_mask",
    "diagonal_forbidden",
    did="forbids the diagonal too: a token cannot see itself",
    idea=CAUSAL,
    section="causal_mask",
)
def causal_triu_k0(seq_len):
    return np.triu(np.ones((seq_len, seq_len), dtype=bool))


@model(
    "causal_mask",
    "causal_wrong_triangle",
    did="forbids the past (below the diagonal), not the future",
    idea=CAUSAL,
    section="causal_mask",
)
def causal_tril_k1(seq_len):
    return np.tril(np.ones((seq_len, seq_len), dtype=bool), k=-1)


NOT_BOOL = (
    "A mask is a bool array: 0/1 numbers are not a boolean mask (~mask flips every bit of an "
    "integer, and np.where reads a float as a number)."
)


@model(
    "causal_mask",
    "mask_not_bool",
    did="returns the pattern as 0/1 floats, not bools",
    idea=NOT_BOOL,
    section="Conventions, a mask",
)
def causal_float(seq_len):
    return np.triu(np.ones((seq_len, seq_len)), k=1)


@model(
    "causal_mask",
    "mask_not_bool",
    did="returns the pattern as 0/1 integers, not bools",
    idea=NOT_BOOL,
    section="Conventions, a mask",
)
def causal_int(seq_len):
    return np.triu(np.ones((seq_len, seq_len), dtype=int), k=1)


FIXED = (
    "causal_mask(n) has shape (n, n) for every n: a mask cut from a block of fixed size is "
    "wrong for any sequence longer than the block."
)


def _cut_from_block(size: int):
    """causal_mask cut from a precomputed mask of `size` tokens."""
    block = np.triu(np.ones((size, size), dtype=bool), k=1)

    def causal_block(seq_len):
        return block[:seq_len, :seq_len]

    return causal_block


for _size in (64, 100, 128, 256, 500, 512, 1000, 1024):  # the sizes students write in
    model(
        "causal_mask",
        "fixed_size_block",
        did=f"cuts the mask from a precomputed block of {_size} rows",
        idea=FIXED,
        section="causal_mask",
    )(_cut_from_block(_size))


# --------------------------------------------------------------------------- self_attention

SELF = "self_attention"
CAUSAL_FLAG = (
    "causal=True forbids every token to see the tokens after it, with the causal mask of the "
    "sequence's length (X.shape[-2]); causal=False means no mask at all."
)


def _self(X, W_q, W_k, W_v, mask=None):
    return ref.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask)


@model(
    SELF,
    "causal_always",
    did="applies the causal mask whatever `causal` says",
    idea=CAUSAL_FLAG,
    section="self_attention",
)
def self_always_causal(X, W_q, W_k, W_v, causal=False):
    return _self(X, W_q, W_k, W_v, ref.causal_mask(X.shape[-2]))


@model(
    SELF,
    "causal_ignored",
    did="never applies a mask, whatever `causal` says",
    idea=CAUSAL_FLAG,
    section="self_attention",
)
def self_ignores_causal(X, W_q, W_k, W_v, causal=False):
    return _self(X, W_q, W_k, W_v)


@model(
    SELF,
    "causal_wrong_triangle",
    did="builds the causal mask as the lower triangle (what a token may see)",
    idea=CAUSAL + " " + CAUSAL_FLAG,
    section="causal_mask",
)
def self_causal_as_tril(X, W_q, W_k, W_v, causal=False):
    n = X.shape[-2]
    return _self(X, W_q, W_k, W_v, np.tril(np.ones((n, n), dtype=bool)) if causal else None)


@model(
    SELF,
    "causal_wrong_triangle",
    did="builds the causal mask below the diagonal: it forbids the past, not the future",
    idea=CAUSAL + " " + CAUSAL_FLAG,
    section="causal_mask",
)
def self_causal_forbids_past(X, W_q, W_k, W_v, causal=False):
    n = X.shape[-2]
    return _self(X, W_q, W_k, W_v, np.tril(np.ones((n, n), dtype=bool), k=-1) if causal else None)


@model(
    SELF,
    "length_from_first_axis",
    did="takes the sequence length from X.shape[0], the batch size when X is a batch",
    idea=CAUSAL_FLAG + " In a batch (..., seq_len, d_model) the length is the second axis "
    "from the end.",
    section="Conventions, batches",
)
def self_mask_from_first_axis(X, W_q, W_k, W_v, causal=False):
    return _self(X, W_q, W_k, W_v, ref.causal_mask(X.shape[0]) if causal else None)


@model(
    SELF,
    "causal_flag_as_mask",
    did="passes the flag `causal` itself on as the mask",
    idea=CAUSAL_FLAG + " A mask of True forbids every key: the flag says whether to build "
    "the causal mask, it is not one.",
    section="self_attention",
)
def self_flag_as_mask(X, W_q, W_k, W_v, causal=False):
    return _self(X, W_q, W_k, W_v, causal)


PROJECT = (
    "Queries, keys and values all come from X, each projected by its own matrix: X @ W_q, "
    "X @ W_k and X @ W_v; the values are projected too, to width d_v."
)


@model(
    SELF,
    "values_unprojected",
    did="uses X itself as the values, without W_v",
    idea=PROJECT,
    section="self_attention",
)
def self_values_unprojected(X, W_q, W_k, W_v, causal=False):
    mask = ref.causal_mask(X.shape[-2]) if causal else None
    return ref.scaled_dot_product_attention(X @ W_q, X @ W_k, X, mask)


@model(
    SELF,
    "values_from_wrong_matrix",
    did="projects the values with W_k, not W_v",
    idea=PROJECT,
    section="self_attention",
)
def self_values_with_w_k(X, W_q, W_k, W_v, causal=False):
    mask = ref.causal_mask(X.shape[-2]) if causal else None
    return ref.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_k, mask)


@model(
    SELF,
    "roles_swapped",
    did="projects the queries with W_k and the keys with W_q",
    idea=PROJECT,
    section="self_attention",
)
def self_roles_swapped(X, W_q, W_k, W_v, causal=False):
    mask = ref.causal_mask(X.shape[-2]) if causal else None
    return ref.scaled_dot_product_attention(X @ W_k, X @ W_q, X @ W_v, mask)


@model(
    SELF,
    "in_place",
    did="scales a weight matrix in place",
    idea="The caller's arrays must be left as they were: they may be used again, or be "
    "read-only. Build the scaled matrix as a new array.",
    section="Conventions, pure functions",
)
def self_scales_w_q_in_place(X, W_q, W_k, W_v, causal=False):
    W_q /= 1.0
    return ref.self_attention(X, W_q, W_k, W_v, causal)


# -------------------------------------------------------------------------- cross_attention

CROSS = "cross_attention"
SOURCES = (
    "In cross-attention the queries come from X (X @ W_q) and the keys and values from context "
    "(context @ W_k, context @ W_v): each token of X asks which tokens of the context matter to "
    "it, so the weights are (seq_len_q, seq_len_k) = (len(X), len(context))."
)


@model(
    CROSS,
    "roles_swapped",
    did="takes the queries from context and the keys and values from X",
    idea=SOURCES,
    section="cross_attention",
)
def cross_roles_swapped(X, context, W_q, W_k, W_v, mask=None):
    return ref.scaled_dot_product_attention(context @ W_q, X @ W_k, X @ W_v, mask)


@model(
    CROSS,
    "values_from_x",
    did="takes the values from X, not from context",
    idea=SOURCES,
    section="cross_attention",
)
def cross_values_from_x(X, context, W_q, W_k, W_v, mask=None):
    return ref.scaled_dot_product_attention(X @ W_q, context @ W_k, X @ W_v, mask)


@model(
    CROSS,
    "values_from_wrong_matrix",
    did="projects the values with W_k, not W_v",
    idea=SOURCES,
    section="cross_attention",
)
def cross_values_with_w_k(X, context, W_q, W_k, W_v, mask=None):
    return ref.scaled_dot_product_attention(X @ W_q, context @ W_k, context @ W_k, mask)


@model(
    CROSS, "mask_ignored", did="never passes the mask on", idea=MASK, section="Conventions, a mask"
)
def cross_ignores_mask(X, context, W_q, W_k, W_v, mask=None):
    return ref.cross_attention(X, context, W_q, W_k, W_v)


@model(
    CROSS,
    "mask_inverted",
    did="forbids the keys where the mask is False (True taken as allowed)",
    idea=MASK,
    section="Conventions, a mask",
)
def cross_mask_inverted(X, context, W_q, W_k, W_v, mask=None):
    return ref.cross_attention(X, context, W_q, W_k, W_v, None if mask is None else ~mask)


@model(
    CROSS,
    "default_causal_mask",
    did="builds a causal mask when no mask is given",
    idea="mask=None means no mask at all: cross-attention has no causal default, and a causal "
    "mask, square in the queries, does not even fit (seq_len_q, seq_len_k) scores.",
    section="cross_attention",
)
def cross_default_causal(X, context, W_q, W_k, W_v, mask=None):
    if mask is None:
        mask = ref.causal_mask(X.shape[-2])
    return ref.scaled_dot_product_attention(X @ W_q, context @ W_k, context @ W_v, mask)


@model(
    CROSS,
    "transpose_all_axes",
    did="transposes the keys with .T, which reverses every axis of a batch",
    idea=BATCH_AXES,
    section="Conventions, batches",
)
def cross_k_transpose(X, context, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, context @ W_k, context @ W_v
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = ref.softmax(scores, axis=-1)
    return weights @ V, weights


@model(
    CROSS,
    "in_place",
    did="scales a weight matrix in place",
    idea="The caller's arrays must be left as they were: they may be used again, or be "
    "read-only. Build the scaled matrix as a new array.",
    section="Conventions, pure functions",
)
def cross_scales_w_q_in_place(X, context, W_q, W_k, W_v, mask=None):
    W_q *= 1.0
    return ref.cross_attention(X, context, W_q, W_k, W_v, mask)


# ------------------------------------------------------------------------------ split_heads

HEADS = (
    "Head h holds the columns h*d_k:(h+1)*d_k of every token. Reshaping (..., seq_len, d_model) "
    "to (..., seq_len, num_heads, d_k) cuts each token's row into its heads; the heads axis then "
    "moves before the positions. A reshape straight to (..., num_heads, seq_len, d_k) keeps the "
    "shape right but mixes tokens and heads."
)


@model(
    "split_heads",
    "heads_mixed_with_tokens",
    did="reshapes straight to (..., num_heads, seq_len, d_k), mixing tokens and heads",
    idea=HEADS,
    section="split_heads",
)
def split_reshape_direct(X, num_heads):
    *lead, n, d = X.shape
    if d % num_heads:
        raise ValueError(f"d_model={d} is not divisible by num_heads={num_heads}")
    return X.reshape(*lead, num_heads, n, d // num_heads)


@model(
    "split_heads",
    "heads_axis_not_moved",
    did="reshapes to (..., seq_len, num_heads, d_k) and leaves the heads axis after the positions",
    idea=HEADS,
    section="split_heads",
)
def split_no_transpose(X, num_heads):
    *lead, n, d = X.shape
    if d % num_heads:
        raise ValueError(f"d_model={d} is not divisible by num_heads={num_heads}")
    return X.reshape(*lead, n, num_heads, d // num_heads)


FIXED_AXES = (
    "With leading batch axes, only the last axis is split into heads, and the heads axis goes "
    "just before the positions: a transpose with fixed axes (1, 0, 2), or a reshape to "
    "(seq_len, ...), fits a single sequence only."
)


@model(
    "split_heads",
    "two_dimensional_only",
    did="transposes with fixed axes (1, 0, 2), which fits a single sequence only",
    idea=FIXED_AXES,
    section="Conventions, batches",
)
def split_transpose_2d(X, num_heads):
    seq_len, d_model = X.shape[-2:]
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    return X.reshape(seq_len, num_heads, d_model // num_heads).transpose(1, 0, 2)


@model(
    "split_heads",
    "no_divisibility_check",
    did="cuts num_heads blocks of d_model // num_heads columns without checking that they "
    "use every column",
    idea="When num_heads does not divide d_model, the heads cannot hold "
    "every column: split_heads raises ValueError instead of silently dropping some.",
    section="split_heads",
)
def split_no_value_error(X, num_heads):
    d_k = X.shape[-1] // num_heads
    return np.stack([X[..., h * d_k : (h + 1) * d_k] for h in range(num_heads)], axis=-3)


@model(
    "split_heads",
    "in_place",
    did="sets the shape of the input array itself",
    idea="Setting X.shape reshapes the caller's array too: the caller's arrays must be left "
    "as they were. np.reshape (or X.reshape) returns a new view instead.",
    section="Conventions, pure functions",
)
def split_shape_in_place(X, num_heads):
    *lead, n, d = X.shape
    if d % num_heads:
        raise ValueError(f"d_model={d} is not divisible by num_heads={num_heads}")
    X.shape = (*lead, n, num_heads, d // num_heads)
    return np.swapaxes(X, -2, -3)


# ---------------------------------------------------------------------------- combine_heads

COMBINE = (
    "combine_heads undoes split_heads: the heads and positions axes trade places back, to "
    "(..., seq_len, num_heads, d_k), and then each token's heads lie side by side, in order, "
    "(..., seq_len, num_heads * d_k)."
)


@model(
    "combine_heads",
    "heads_axis_not_moved",
    did="reshapes (..., num_heads, seq_len, d_k) straight to (..., seq_len, num_heads * d_k) "
    "without moving the heads axis",
    idea=COMBINE,
    section="combine_heads",
)
def combine_reshape_direct(H):
    *lead, h, n, d_k = H.shape
    return H.reshape(*lead, n, h * d_k)


@model(
    "combine_heads",
    "heads_reversed",
    did="puts the heads side by side in reverse order",
    idea=COMBINE,
    section="combine_heads",
)
def combine_reversed(H):
    return np.concatenate([H[..., h, :, :] for h in reversed(range(H.shape[-3]))], axis=-1)


@model(
    "combine_heads",
    "rows_from_heads",
    did="reshapes to (..., num_heads, -1): its rows "
    "are counted from the heads, not from the tokens",
    idea=COMBINE,
    section="combine_heads",
)
def combine_rows_from_heads(H):
    num_heads = H.shape[-3]
    return np.swapaxes(H, -2, -3).reshape(*H.shape[:-3], num_heads, -1)


@model(
    "combine_heads",
    "two_dimensional_only",
    did="transposes with fixed axes (1, 0, 2), which fits a single sequence only",
    idea=FIXED_AXES.replace("split into heads", "joined from heads"),
    section="Conventions, batches",
)
def combine_transpose_2d(H):
    num_heads, seq_len, d_k = H.shape[-3:]
    return H.transpose(1, 0, 2).reshape(seq_len, num_heads * d_k)


@model(
    "combine_heads",
    "in_place",
    did="changes the input array in place (np.clip(..., out=H))",
    idea="The caller's arrays must be left as they were: they may be used again, or be read-only.",
    section="Conventions, pure functions",
)
def combine_clips_in_place(H):
    np.clip(H, -1e30, 1e30, out=H)
    return ref.combine_heads(H)


# --------------------------------------------------------------------- multi_head_attention

MHA = "multi_head_attention"
MHA_STEPS = (
    "Multi-head attention projects X (queries) and the source, X or context (keys and values), "
    "splits each projection into heads (split_heads), attends in every head with that head's "
    "own scale sqrt(d_k), d_k = d_model // num_heads, combines the heads (combine_heads) and "
    "multiplies by W_o."
)


def _head_mask(mask):
    """A mask for every head: its batch axes, a head axis of 1, then (seq_q, seq_k)."""
    if mask is not None and np.ndim(mask) >= 2:
        return np.expand_dims(mask, -3)
    return mask


def _mha(
    X,
    W_q,
    W_k,
    W_v,
    W_o,
    num_heads,
    mask=None,
    context=None,
    *,
    scale=None,
    weights_out=None,
    project=True,
):
    """Multi-head attention with the choices a mistake changes."""
    source = X if context is None else context
    Q = ref.split_heads(X @ W_q, num_heads)  # (..., heads, seq_q, d_k)
    K = ref.split_heads(source @ W_k, num_heads)
    V = ref.split_heads(source @ W_v, num_heads)
    if scale is not None:
        Q = Q * np.sqrt(Q.shape[-1]) / scale  # the reference divides by sqrt(d_k) again
    heads, weights = ref.scaled_dot_product_attention(Q, K, V, _head_mask(mask))
    out = ref.combine_heads(heads)
    out = out @ W_o if project else out
    return out, weights if weights_out is None else weights_out(weights)


@model(
    MHA,
    "weights_averaged",
    did="averages the heads' weights into one matrix",
    idea="Every head has weights of its own, and they differ: the weights returned are "
    "(..., num_heads, seq_len_q, seq_len_k), one matrix per head, never averaged (torch's "
    "nn.MultiheadAttention averages by default).",
    section="multi_head_attention",
)
def mha_averaged(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    return _mha(
        X, W_q, W_k, W_v, W_o, num_heads, mask, context, weights_out=lambda w: w.mean(axis=-3)
    )


@model(
    MHA,
    "weights_axes_swapped",
    did="returns the weights as (..., seq_len_q, num_heads, seq_len_k), heads and queries swapped",
    idea="The weights are (..., num_heads, "
    "seq_len_q, seq_len_k): weights[..., h, i, j] is how much query i of head h attends to "
    "key j.",
    section="multi_head_attention",
)
def mha_weights_swapped(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    return _mha(
        X,
        W_q,
        W_k,
        W_v,
        W_o,
        num_heads,
        mask,
        context,
        weights_out=lambda w: np.swapaxes(w, -3, -2),
    )


@model(
    MHA,
    "scaled_by_d_model",
    did="divides every head's scores by sqrt(d_model), not by sqrt of the head's own d_k",
    idea=MHA_STEPS,
    section="multi_head_attention",
)
def mha_scaled_by_d_model(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    return _mha(X, W_q, W_k, W_v, W_o, num_heads, mask, context, scale=np.sqrt(W_q.shape[-1]))


@model(
    MHA,
    "scaled_by_d_k",
    did="divides every head's scores by d_k, not by its square root "
    "(or by sqrt(d_k) twice: scaled once more before scaled_dot_product_attention)",
    idea=MHA_STEPS,
    section="multi_head_attention",
)
def mha_scaled_twice(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    d_k = W_q.shape[-1] // num_heads
    return _mha(X, W_q, W_k, W_v, W_o, num_heads, mask, context, scale=d_k)


@model(
    MHA,
    "no_output_projection",
    did="combines the heads but never multiplies by W_o",
    idea=MHA_STEPS + " Without W_o each output feature comes from one head only.",
    section="multi_head_attention",
)
def mha_no_w_o(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    return _mha(X, W_q, W_k, W_v, W_o, num_heads, mask, context, project=False)


@model(
    MHA,
    "context_ignored",
    did="attends within X even when a context is given",
    idea="context=None is self-attention; given a context, the keys and values come from it "
    "(cross-attention), the queries still from X.",
    section="multi_head_attention",
)
def mha_ignores_context(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    return _mha(X, W_q, W_k, W_v, W_o, num_heads, mask)


@model(
    MHA,
    "values_from_wrong_matrix",
    did="projects the context's keys with W_v and its values with W_k",
    idea=MHA_STEPS,
    section="multi_head_attention",
)
def mha_context_swapped(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    if context is None:
        return ref.multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask)
    return _mha(X, W_q, W_v, W_k, W_o, num_heads, mask, context)


@model(
    MHA,
    "mask_ignored_with_context",
    did="drops the mask when a context is given",
    idea="mask and context combine: the mask forbids keys of the context as it forbids keys of X.",
    section="multi_head_attention",
)
def mha_mask_dropped_with_context(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    return _mha(X, W_q, W_k, W_v, W_o, num_heads, None if context is not None else mask, context)


HEAD_MASK = (
    "The mask applies to every head: a mask with batch axes (..., seq_len_q, seq_len_k) gets a "
    "head axis of 1 before its last two, (..., 1, seq_len_q, seq_len_k), so that it broadcasts "
    "over the heads; a mask without batch axes (seq_len_q, seq_len_k), or a key mask "
    "(seq_len_k,), broadcasts as it is."
)


@model(
    MHA,
    "mask_without_head_axis",
    did="passes a mask with batch axes on as it is: its batch axis meets the heads axis",
    idea=HEAD_MASK,
    section="multi_head_attention",
)
def mha_mask_without_head_axis(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q, K, V = (ref.split_heads(A, num_heads) for A in (X @ W_q, source @ W_k, source @ W_v))
    heads, weights = ref.scaled_dot_product_attention(Q, K, V, mask)
    return ref.combine_heads(heads) @ W_o, weights


@model(
    MHA,
    "mask_head_axis_always",
    did="inserts a head axis into every mask "
    "(mask[..., None, :, :]), which a key mask of one axis does not have",
    idea=HEAD_MASK,
    section="multi_head_attention",
)
def mha_mask_head_axis_always(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q, K, V = (ref.split_heads(A, num_heads) for A in (X @ W_q, source @ W_k, source @ W_v))
    if mask is not None:
        mask = mask[..., None, :, :]
    heads, weights = ref.scaled_dot_product_attention(Q, K, V, mask)
    return ref.combine_heads(heads) @ W_o, weights


@model(
    MHA,
    "mask_first_head_only",
    did="puts the mask into the first head's slot only",
    idea=HEAD_MASK,
    section="multi_head_attention",
)
def mha_mask_head0_only(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q, K, V = (ref.split_heads(A, num_heads) for A in (X @ W_q, source @ W_k, source @ W_v))
    if mask is not None:
        head_mask = np.zeros((num_heads, *np.shape(mask)), dtype=bool)
        head_mask[0] = mask
        mask = head_mask
    heads, weights = ref.scaled_dot_product_attention(Q, K, V, mask)
    return ref.combine_heads(heads) @ W_o, weights


@model(
    MHA,
    "heads_mixed_with_tokens",
    did="splits into heads by reshaping straight to "
    "(..., num_heads, seq_len, d_k), mixing tokens and heads",
    idea=HEADS,
    section="split_heads",
)
def mha_mixed_heads(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context

    def split(A):
        *lead, n, d = A.shape
        return A.reshape(*lead, num_heads, n, d // num_heads)

    heads, weights = ref.scaled_dot_product_attention(
        split(X @ W_q), split(source @ W_k), split(source @ W_v), _head_mask(mask)
    )
    *lead, h, n, d_k = heads.shape
    return heads.reshape(*lead, n, h * d_k) @ W_o, weights


@model(
    MHA,
    "two_dimensional_only",
    did="splits into heads with fixed axes (1, 0, 2), which fits a single sequence only",
    idea=FIXED_AXES,
    section="Conventions, batches",
)
def mha_transpose_2d(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context

    def split(A):
        seq_len, d_model = A.shape[-2:]
        return A.reshape(seq_len, num_heads, d_model // num_heads).transpose(1, 0, 2)

    heads, weights = ref.scaled_dot_product_attention(
        split(X @ W_q), split(source @ W_k), split(source @ W_v), _head_mask(mask)
    )
    return ref.combine_heads(heads) @ W_o, weights


@model(
    MHA,
    "in_place",
    did="scales a weight matrix in place",
    idea="The caller's arrays must be left as they were: they may be used again, or be "
    "read-only. Build the scaled matrix as a new array.",
    section="Conventions, pure functions",
)
def mha_scales_w_q_in_place(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    W_q *= 1.0
    return ref.multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask, context)


# --------------------------------------------------------------------------- attention_cost

COST = "attention_cost"
COUNTS = (
    "Attention computes one score per (query, key) pair in every head of every batch element: "
    "batch_size * num_heads * seq_len_q * seq_len_k of them, each a dot product of d_k = "
    "d_model // num_heads terms, one multiply-add (2 FLOPs) per term; weights @ V costs the "
    "same, and the weights take bytes_per_float bytes each."
)


def _counts(pairs, d_k, bytes_per_float, flops_per_term=2):
    return {
        "score_flops": flops_per_term * pairs * d_k,
        "mix_flops": flops_per_term * pairs * d_k,
        "weights_bytes": pairs * bytes_per_float,
    }


@model(
    COST,
    "one_weight_matrix",
    did="stores one weight matrix for all heads",
    idea=COUNTS,
    section="attention_cost",
)
def cost_bytes_ignore_heads(
    seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4
):
    found = _counts(
        batch_size * num_heads * seq_len_q * seq_len_k, d_model // num_heads, bytes_per_float
    )
    found["weights_bytes"] = batch_size * seq_len_q * seq_len_k * bytes_per_float
    return found


@model(
    COST,
    "full_width_per_head",
    did="lets every head work at the full width d_model, not d_k = d_model // num_heads",
    idea=COUNTS,
    section="attention_cost",
)
def cost_d_model_per_head(
    seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4
):
    return _counts(batch_size * num_heads * seq_len_q * seq_len_k, d_model, bytes_per_float)


@model(
    COST,
    "batch_ignored",
    did="counts one sequence whatever batch_size says",
    idea=COUNTS,
    section="attention_cost",
)
def cost_ignores_batch(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    return _counts(num_heads * seq_len_q * seq_len_k, d_model // num_heads, bytes_per_float)


@model(
    COST,
    "linear_in_length",
    did="counts one score per token (seq_len_q + seq_len_k), not one per (query, key) pair",
    idea=COUNTS + " That is why attention is quadratic in the sequence length.",
    section="attention_cost",
)
def cost_linear(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    return _counts(
        batch_size * num_heads * (seq_len_q + seq_len_k), d_model // num_heads, bytes_per_float
    )


@model(
    COST,
    "multiply_add_one_flop",
    did="counts a multiply-add as one FLOP, not two",
    idea=COUNTS,
    section="attention_cost",
)
def cost_one_flop(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    return _counts(
        batch_size * num_heads * seq_len_q * seq_len_k,
        d_model // num_heads,
        bytes_per_float,
        flops_per_term=1,
    )


@model(
    COST,
    "bytes_per_float_ignored",
    did="counts 4 bytes per weight whatever bytes_per_float says",
    idea=COUNTS,
    section="attention_cost",
)
def cost_fixed_bytes(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    return _counts(batch_size * num_heads * seq_len_q * seq_len_k, d_model // num_heads, 4)


WHOLE_WIDTH = (
    "d_k = d_model // num_heads is a whole number of columns per head, as the course text "
    "computes it, also when num_heads does not divide d_model; and every count is an int."
)


@model(
    COST,
    "fractional_d_k",
    did="takes d_k = d_model / num_heads, a fraction when num_heads does not divide d_model",
    idea=WHOLE_WIDTH,
    section="attention_cost",
)
def cost_true_division(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    pairs = batch_size * num_heads * seq_len_q * seq_len_k
    found = _counts(pairs, d_model / num_heads, bytes_per_float)
    return {k: round(v) for k, v in found.items()}


@model(
    COST,
    "fractional_d_k",
    did="counts in floats, with d_k = d_model / num_heads",
    idea=WHOLE_WIDTH,
    section="attention_cost",
)
def cost_float_counts(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    pairs = float(batch_size) * num_heads * seq_len_q * seq_len_k
    return _counts(pairs, d_model / num_heads, bytes_per_float)


@model(
    COST,
    "int32_overflow",
    did="counts in 32-bit integers, which overflow past 2**31",
    idea="Counts of long sequences run into the billions and beyond: Python's int (or "
    "int64) holds them, 32-bit integers wrap around.",
    section="attention_cost",
)
def cost_int32(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    pairs = np.int32(batch_size) * np.int32(num_heads) * np.int32(seq_len_q) * np.int32(seq_len_k)
    d_k = np.int32(d_model // num_heads)  # (overflowing, and warning that it does)
    return _counts(pairs, d_k, np.int32(bytes_per_float), flops_per_term=np.int32(2))


@model(
    COST,
    "missing_key",
    did="returns a dict without one of the entries the contract names (a misspelled key?)",
    idea="attention_cost returns at least score_flops, mix_flops and "
    "weights_bytes, spelled exactly so: callers read them by name.",
    section="attention_cost",
    symptom=True,
)
def cost_missing_key(call, outcome):
    value = outcome.value if outcome.status == "ok" else None
    required = ("score_flops", "mix_flops", "weights_bytes")
    return isinstance(value, dict) and not all(k in value for k in required)


# ------------------------------------------------- mistakes in forms the graders draw since 0.3


@model(
    "softmax",
    "guard_on_last_axis_only",
    did="looks for slices of only -inf along the last axis, whatever `axis` says",
    idea=ALL_INF + " The slices are those along `axis`.",
    section="softmax",
)
def softmax_guard_last_axis(z, axis=-1):
    z = np.asarray(z, dtype=float)
    dead = np.isneginf(z).all(axis=-1, keepdims=True)
    m = np.max(np.where(dead, 0.0, z), axis=axis, keepdims=True)
    e = np.where(dead, 0.0, np.exp(z - m))
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


@model(
    "softmax",
    "nan_patched_afterwards",
    did="divides 0 by 0 for a slice of only -inf and replaces the NaN afterwards (np.nan_to_num)",
    idea=ALL_INF + " Replaced afterwards, the "
    "NaN has already warned: the 0 / 0 is avoided, not repaired.",
    section="Conventions, a fully masked row",
)
def softmax_nan_to_num(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return np.nan_to_num(e / np.sum(e, axis=axis, keepdims=True))


@model(
    "softmax",
    "result_in_input_dtype",
    did="exponentiates into an array of the input's dtype (np.exp(..., out=np.empty_like(z)))",
    idea="Weights are fractions: integer scores "
    "still give float64 weights, so the result is made as a float array whatever the "
    "scores' dtype.",
    section="Conventions, float64",
)
def softmax_exp_into_input_dtype(z, axis=-1):
    m = np.max(z, axis=axis, keepdims=True)
    e = np.empty_like(z)
    np.exp(z - np.where(np.isfinite(m), m, 0), out=e)
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1)


@model(
    SDPA,
    "fully_masked_rows_unmasked",
    did="lets a query whose every key is forbidden see them all again, so its weights are uniform",
    idea="A query whose every key is forbidden "
    "gets all-zero weights and an all-zero output: its row of -inf scores is not unmasked, "
    "its softmax gives zeros.",
    section="Conventions, a fully masked row",
)
def sdpa_fully_masked_unmasked(Q, K, V, mask=None):
    if mask is not None:
        scores_shape = (*np.broadcast_shapes(Q.shape[:-2], K.shape[:-2]), Q.shape[-2], K.shape[-2])
        mask = np.broadcast_to(mask, scores_shape)
        mask = mask & ~mask.all(axis=-1, keepdims=True)
    return _sdpa(Q, K, V, mask)


@model(
    SDPA,
    "mask_made_one_matrix",
    did="broadcasts the mask to one (seq_len_q, seq_len_k) matrix",
    idea=BOOLEAN_INDEX.replace(
        " Indexing the scores with the mask fits only a mask "
        "of the scores' own shape; choosing between the scores and -inf elementwise fits every "
        "broadcastable one.",
        " A mask with batch axes gives each batch element a mask of its "
        "own: it broadcasts against the scores as it is.",
    ),
    section="Conventions, a mask",
)
def sdpa_mask_one_matrix(Q, K, V, mask=None):
    if mask is not None:
        mask = np.broadcast_to(mask, (Q.shape[-2], K.shape[-2]))
    return _sdpa(Q, K, V, mask)


@model(
    "split_heads",
    "fixed_number_of_axes",
    did="unpacks the shape as exactly three axes (batch, seq_len, d_model)",
    idea="split_heads takes (..., seq_len, d_model): one "
    "sequence alone, a batch, or a batch of batches; only the last axis is split.",
    section="Conventions, batches",
)
def split_three_axes(X, num_heads):
    batch, seq_len, d_model = X.shape
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    return X.reshape(batch, seq_len, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)


@model(
    "split_heads",
    "wrong_divisibility_check",
    did="checks that d_model is even, not that num_heads divides it",
    idea="The heads can hold every column exactly when num_heads "
    "divides d_model (d_model % num_heads == 0); otherwise split_heads raises ValueError.",
    section="split_heads",
)
def split_checks_even(X, num_heads):
    *lead, seq_len, d_model = X.shape
    if d_model % 2:
        raise ValueError("d_model must be even")
    d_k = d_model // num_heads
    return np.swapaxes(X[..., : num_heads * d_k].reshape(*lead, seq_len, num_heads, d_k), -2, -3)


@model(
    MHA,
    "mask_assumed_square",
    did="broadcasts the mask to square (seq_len_q, seq_len_q) "
    "scores, as if keys always came from X",
    idea="With a context the scores are "
    "(..., num_heads, seq_len_q, seq_len_k), and so is what the mask broadcasts to. " + HEAD_MASK,
    section="multi_head_attention",
)
def mha_mask_assumed_square(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    if mask is not None:
        n = X.shape[-2]
        mask = np.broadcast_to(_head_mask(np.asarray(mask)), (*X.shape[:-2], num_heads, n, n))
        source = X if context is None else context
        Q, K, V = (ref.split_heads(A, num_heads) for A in (X @ W_q, source @ W_k, source @ W_v))
        heads, weights = ref.scaled_dot_product_attention(Q, K, V, mask)
        return ref.combine_heads(heads) @ W_o, weights
    return ref.multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask, context)


@model(
    COST,
    "d_k_rounded_up",
    did="rounds the head width up (ceiling division)",
    idea=WHOLE_WIDTH,
    section="attention_cost",
)
def cost_ceiling_d_k(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    return _counts(
        batch_size * num_heads * seq_len_q * seq_len_k, -(-d_model // num_heads), bytes_per_float
    )
