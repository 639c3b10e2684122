# function: scaled_dot_product_attention
# caught-by: test_values_match_reference, test_scaled_by_sqrt_d_k
# misconception: scale_from_other_width
# Takes the scale from the values' width (d_v), which only works when d_v == d_k.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
