# function: scaled_dot_product_attention
# caught-by: test_batched_equals_per_slice_loop, test_broadcast_mask_with_batch
# misconception: transpose_all_axes
# The course text's K.T: fine for one sequence, but reverses every axis of a batch.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
