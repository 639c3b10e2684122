# function: scaled_dot_product_attention
# caught-by: test_forbidden_weights_are_exactly_zero, test_mask_applied_before_softmax, test_fully_masked_row_gives_zeros
# misconception: mask_inverted
# Reads the mask the PyTorch-SDPA way (True = take part), the opposite of the course convention.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
