# function: scaled_dot_product_attention
# caught-by: test_values_match_reference, test_weights_rows_sum_to_one, test_scaled_by_sqrt_d_k, test_mask_applied_before_softmax
# misconception: softmax_over_queries
# Normalises each key's column (over the queries, axis=-2) instead of each query's row.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-2)
    return weights @ V, weights
