# function: self_attention
# caught-by: test_causal_masks_the_future, test_causal_future_does_not_leak
# misconception: causal_wrong_triangle
# Builds the causal mask with np.tril (True = allowed), so the future is allowed.
import numpy as np


def self_attention(X, W_q, W_k, W_v, causal=False):
    Q, K, V = create_qkv(X, W_q, W_k, W_v)
    n = X.shape[-2]
    mask = np.tril(np.ones((n, n)), k=-1).astype(bool) if causal else None
    return scaled_dot_product_attention(Q, K, V, mask)
