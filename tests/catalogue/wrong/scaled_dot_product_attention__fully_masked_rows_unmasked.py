# function: scaled_dot_product_attention
# caught-by: test_fully_masked_row_gives_zeros
# misconception: fully_masked_rows_unmasked
# Lets a query whose every key is forbidden see them all again, to avoid 0 / 0: its weights become uniform instead of zeros.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        mask = np.broadcast_to(mask, scores.shape)
        mask = mask & ~mask.all(axis=-1, keepdims=True)
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
