# function: causal_mask
# The course text's construction: the strict upper triangle of ones, as bool.
import numpy as np


def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len)), k=1).astype(bool)
