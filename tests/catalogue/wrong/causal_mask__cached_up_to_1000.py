# function: causal_mask
# caught-by: test_shape_for_several_sizes
# misconception: fixed_size_block
# Builds one mask of 1000 tokens once, to save time, and cuts the one asked for from it.
import numpy as np

_LARGEST = ~np.tri(1000, dtype=bool)


def causal_mask(seq_len):
    return _LARGEST[:seq_len, :seq_len].copy()
