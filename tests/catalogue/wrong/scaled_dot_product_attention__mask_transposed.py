# function: scaled_dot_product_attention
# caught-by: test_forbidden_weights_are_exactly_zero
# Reads the mask as (key, query): only a square mask fits, and then the wrong entries are forbidden.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(np.swapaxes(mask, -1, -2), -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
