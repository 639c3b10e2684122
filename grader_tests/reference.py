"""Reference implementation of every graded function, in float64.

The single source of truth for the graders: expected values are computed here on seeded random
inputs. It follows the exercise contract, docs/exercise-contract.md, to the letter.
"""

from __future__ import annotations

import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)  # an all -inf slice: shift by 0, not by -inf
    e = np.exp(z - m)
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1.0)  # an all -inf slice gives zeros


def create_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_v


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # (..., seq_q, seq_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)  # (..., seq_q, seq_k)
    return weights @ V, weights  # (..., seq_q, d_v)


def causal_mask(seq_len):
    i = np.arange(seq_len)
    return i[None, :] > i[:, None]  # True strictly above the diagonal


def self_attention(X, W_q, W_k, W_v, causal=False):
    Q, K, V = create_qkv(X, W_q, W_k, W_v)
    mask = causal_mask(X.shape[-2]) if causal else None
    return scaled_dot_product_attention(Q, K, V, mask)


def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    Q = X @ W_q  # (..., seq_q, d_k)
    K = context @ W_k  # (..., seq_k, d_k)
    V = context @ W_v  # (..., seq_k, d_v)
    return scaled_dot_product_attention(Q, K, V, mask)


def split_heads(X, num_heads):
    *lead, seq_len, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    d_k = d_model // num_heads
    H = X.reshape(*lead, seq_len, num_heads, d_k)
    return np.swapaxes(H, -2, -3)  # (..., num_heads, seq_len, d_k)


def combine_heads(H):
    *lead, num_heads, seq_len, d_k = H.shape
    X = np.swapaxes(H, -2, -3)  # (..., seq_len, num_heads, d_k)
    return X.reshape(*lead, seq_len, num_heads * d_k)


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q = split_heads(X @ W_q, num_heads)  # (..., num_heads, seq_q, d_k)
    K = split_heads(source @ W_k, num_heads)  # (..., num_heads, seq_k, d_k)
    V = split_heads(source @ W_v, num_heads)  # (..., num_heads, seq_k, d_k)
    if mask is not None and np.ndim(mask) >= 2:
        mask = np.expand_dims(mask, -3)  # (..., 1, seq_q, seq_k): the same for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights


def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    d_k = d_model // num_heads
    pairs = batch_size * num_heads * seq_len_q * seq_len_k  # one score per (query, key)
    return {  # the entries the contract names (a function may return more)
        "score_flops": 2 * pairs * d_k,  # Q K^T: one multiply-add per term
        "mix_flops": 2 * pairs * d_k,  # weights @ V
        "weights_bytes": pairs * bytes_per_float,
    }
