# function: softmax
# caught-by: test_large_inputs_do_not_overflow, test_rows_on_different_scales, test_all_masked_row_gives_zeros
# misconception: no_shift
# softmax straight from its definition: np.exp(1000) overflows without the max shift.
import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)
