# function: scaled_dot_product_attention
# caught-by: test_broadcast_mask_with_batch
# misconception: mask_made_one_matrix
# Broadcasts the mask to one (seq_len_q, seq_len_k) matrix first, so that a key mask works: a mask with batch axes no longer fits.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        mask = np.broadcast_to(mask, scores.shape[-2:])
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
