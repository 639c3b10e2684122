# function: scaled_dot_product_attention
# caught-by: test_values_match_reference
# Mixes the keys instead of the values (weights @ K): the right shape only when d_v == d_k.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ K, weights
