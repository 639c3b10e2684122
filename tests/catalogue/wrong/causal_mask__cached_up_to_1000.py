# function: causal_mask
# caught-by: test_returns_bool_array, test_shape_for_several_sizes, test_future_is_forbidden, test_token_sees_itself_and_past, test_matches_causal_pattern
# misconception: fixed_size_block
# Builds one mask of 1000 tokens once, to save time, and cuts the one asked for from it.
import numpy as np

_LARGEST = ~np.tri(1000, dtype=bool)


def causal_mask(seq_len):
    return _LARGEST[:seq_len, :seq_len].copy()
