# function: combine_heads
# caught-by: test_inverse_of_split_heads, test_heads_in_order
# caller-keeps-points: multi_head_attention, fails only test_same_with_your_other_functions
# misconception: heads_reversed
# Concatenates the heads last to first.
import numpy as np


def combine_heads(H):
    return np.concatenate([H[..., h, :, :] for h in reversed(range(H.shape[-3]))], axis=-1)
