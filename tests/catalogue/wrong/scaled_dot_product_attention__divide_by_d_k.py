# function: scaled_dot_product_attention
# caught-by: test_values_match_reference, test_scaled_by_sqrt_d_k
# misconception: scaled_by_d_k
# Divides the scores by d_k instead of by its square root.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / d_k
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
