# function: split_heads
# caught-by: test_head_is_column_block
# misconception: wrong_divisibility_check
# Checks that d_model is even, not that num_heads divides it.
import numpy as np


def split_heads(X, num_heads):
    *lead, seq_len, d_model = X.shape
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    d_k = d_model // num_heads
    H = X[..., : num_heads * d_k].reshape(*lead, seq_len, num_heads, d_k)
    return np.swapaxes(H, -2, -3)
