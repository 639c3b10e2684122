# function: scaled_dot_product_attention
# caught-by: test_values_match_reference, test_scaled_by_sqrt_d_k, test_batched_equals_per_slice_loop, test_broadcast_mask_with_batch
# misconception: scale_from_other_width
# Reads d_k from Q.shape[0] (the number of queries, or the batch size) instead of Q.shape[-1].
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[0]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
