# function: causal_mask
# caught-by: test_returns_bool_array, test_shape_for_several_sizes, test_future_is_forbidden, test_token_sees_itself_and_past, test_matches_causal_pattern
# misconception: causal_wrong_triangle
# Marks what a token MAY see (the lower triangle), the opposite of True = forbidden.
import numpy as np


def causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len))).astype(bool)
