# function: scaled_dot_product_attention
# caught-by: test_values_match_reference, test_scaled_by_sqrt_d_k, test_same_with_your_other_functions
# misconception: no_scaling
# Forgets to divide the scores by sqrt(d_k), and calls a softmax that replaces -inf by 0: the softmax's mistake is named and costs its points in softmax only, the scaling's costs them here.
import numpy as np


def softmax(z, axis=-1):
    z = np.where(np.isneginf(z), 0.0, z)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
