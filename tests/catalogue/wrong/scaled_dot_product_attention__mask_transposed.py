# function: scaled_dot_product_attention
# caught-by: test_forbidden_weights_are_exactly_zero, test_mask_applied_before_softmax, test_broadcast_mask_with_batch, test_fully_masked_row_gives_zeros, test_inputs_not_modified
# misconception: mask_transposed
# Reads the mask as (key, query): only a square mask fits, and then the wrong entries are forbidden.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(np.swapaxes(mask, -1, -2), -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
