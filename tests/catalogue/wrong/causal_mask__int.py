# function: causal_mask
# caught-by: test_returns_bool_array
# misconception: mask_not_bool
# Builds an integer 0/1 mask instead of a boolean one.
import numpy as np


def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len), dtype=int), k=1)
