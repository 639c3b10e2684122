# function: scaled_dot_product_attention
# caught-by: test_fully_masked_row_gives_zeros
# misconception: finite_mask_value
# Uses -1e9 instead of -inf: fine until a whole row is masked, which then becomes uniform.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -1e9, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
