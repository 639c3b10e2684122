# function: scaled_dot_product_attention
# Scores and the weighted sum written with einsum over any leading dimensions.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return np.einsum("...qk,...kv->...qv", weights, V), weights
