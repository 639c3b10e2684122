# function: split_heads
# caught-by: test_raises_value_error
# misconception: no_divisibility_check
# Slices column blocks without checking divisibility: leftover columns are silently dropped.
import numpy as np


def split_heads(X, num_heads):
    d_k = X.shape[-1] // num_heads
    return np.stack([X[..., h * d_k : (h + 1) * d_k] for h in range(num_heads)], axis=-3)
