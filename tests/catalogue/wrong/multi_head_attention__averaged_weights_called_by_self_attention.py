# function: multi_head_attention
# caught-by: test_weights_per_head, test_heads_attend_independently
# caller-keeps-points: self_attention, fails only test_same_with_your_other_functions
# misconception: weights_averaged
# Averages the heads' weights; self_attention (right) is multi-head attention of one head, its weights that head's.
import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(source @ W_k, num_heads)
    V = split_heads(source @ W_v, num_heads)
    if mask is not None and np.ndim(mask) >= 2:
        mask = np.expand_dims(mask, -3)
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights.mean(axis=-3)


def self_attention(X, W_q, W_k, W_v, causal=False):
    mask = causal_mask(X.shape[-2]) if causal else None
    out, weights = multi_head_attention(X, W_q, W_k, W_v, np.eye(W_v.shape[1]), 1, mask=mask)
    return out, weights[..., 0, :, :]
