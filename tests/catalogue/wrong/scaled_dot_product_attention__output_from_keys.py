# function: scaled_dot_product_attention
# caught-by: test_returns_output_and_weights, test_values_match_reference, test_weights_rows_sum_to_one, test_scaled_by_sqrt_d_k, test_forbidden_weights_are_exactly_zero, test_mask_applied_before_softmax, test_fully_masked_row_gives_zeros
# misconception: mixes_keys_not_values
# Mixes the keys instead of the values (weights @ K): the right shape only when d_v == d_k.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ K, weights
