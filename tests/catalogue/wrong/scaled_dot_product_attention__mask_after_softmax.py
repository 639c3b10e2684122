# function: scaled_dot_product_attention
# caught-by: test_mask_applied_before_softmax
# misconception: mask_after_softmax
# Zeroes the forbidden weights after the softmax, so the rows no longer sum to 1.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    weights = softmax(scores, axis=-1)
    if mask is not None:
        weights = weights * ~mask
    return weights @ V, weights
