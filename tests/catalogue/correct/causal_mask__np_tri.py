# function: causal_mask
# The negation of np.tri (True on and below the diagonal).
import numpy as np


def causal_mask(seq_len):
    return ~np.tri(seq_len, dtype=bool)
