# function: softmax
# caught-by: test_rows_are_distributions, test_honours_axis, test_batched_input, test_large_inputs_do_not_overflow, test_rows_on_different_scales, test_all_masked_row_gives_zeros
# misconception: fixed_axis
# Normalises over axis 0 (the columns of a matrix) whatever axis says.
import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)
