# function: causal_mask
# caught-by: test_returns_bool_array, test_shape_for_several_sizes, test_token_sees_itself_and_past, test_matches_causal_pattern
# misconception: diagonal_forbidden
# Forgets k=1: the diagonal is forbidden too, so a token cannot see itself.
import numpy as np


def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len))).astype(bool)
