# function: softmax
# caught-by: test_large_inputs_do_not_overflow, test_rows_on_different_scales, test_all_masked_row_gives_zeros
# misconception: global_max
# Shifts by the maximum of the whole array: rows far below it underflow to 0 / 0.
import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z - np.max(z))
    return e / np.sum(e, axis=axis, keepdims=True)
