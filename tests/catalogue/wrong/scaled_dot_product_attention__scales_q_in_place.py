# function: scaled_dot_product_attention
# caught-by: test_inputs_not_modified
# misconception: in_place
# Scales Q in place (Q /= sqrt(d_k)), changing the caller's array.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q /= np.sqrt(Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
