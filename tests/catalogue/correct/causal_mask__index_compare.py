# function: causal_mask
# The mask built by comparing index arrays: key j is forbidden for query i when i < j.
import numpy as np


def causal_mask(seq_len):
    return np.arange(seq_len)[:, None] < np.arange(seq_len)
