# function: causal_mask
# caught-by: test_returns_bool_array
# misconception: mask_not_bool
# Forgets .astype(bool): returns a float 0/1 matrix.
import numpy as np


def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len)), k=1)
