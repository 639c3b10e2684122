# function: softmax
# caught-by: test_all_masked_row_gives_zeros
# caller-keeps-points: scaled_dot_product_attention, fails only test_same_with_your_other_functions
# misconception: neg_inf_to_zero
# Replaces -inf by 0 "to avoid NaN": an all -inf row gives equal weights, and a masked score gets weight too.
import numpy as np


def softmax(z, axis=-1):
    z = np.where(np.isneginf(z), 0.0, z)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
