# function: scaled_dot_product_attention
# caught-by: test_forbidden_weights_are_exactly_zero, test_mask_applied_before_softmax, test_broadcast_mask_with_batch, test_fully_masked_row_gives_zeros, test_inputs_not_modified
# misconception: mask_as_boolean_index
# Masks with scores[mask] = -inf, which needs the mask to have the scores' full shape.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores[mask] = -np.inf
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
