# function: scaled_dot_product_attention
# caught-by: test_values_match_reference
# misconception: lower_precision
# Casts Q, K and V to float32 for speed and the results back to float64: large scores that differ by little lose their differences.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float32) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.float32(np.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = np.where(mask, np.float32(-np.inf), scores)
    weights = softmax(scores, axis=-1)
    return (weights @ V).astype(np.float64), weights.astype(np.float64)
