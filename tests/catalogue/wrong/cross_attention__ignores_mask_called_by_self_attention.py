# function: cross_attention
# caught-by: test_mask_is_applied
# caller-keeps-points: self_attention, fails only test_same_with_your_other_functions
# misconception: mask_ignored
# Forgets to pass the mask on, and the (correct) self_attention is cross_attention of X to itself: the mask's mistake costs points in cross_attention only.
import numpy as np


def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    Q = X @ W_q
    K = context @ W_k
    V = context @ W_v
    return scaled_dot_product_attention(Q, K, V)


def self_attention(X, W_q, W_k, W_v, causal=False):
    n = X.shape[-2]
    mask = np.arange(n)[:, None] < np.arange(n) if causal else None
    return cross_attention(X, X, W_q, W_k, W_v, mask=mask)
