# function: softmax
# caught-by: test_rows_are_distributions, test_honours_axis, test_batched_input, test_large_inputs_do_not_overflow, test_rows_on_different_scales, test_all_masked_row_gives_zeros, test_input_is_not_modified
# misconception: max_without_keepdims
# Forgets keepdims=True: the per-row max and sum broadcast along the wrong axis.
import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis))
    return e / np.sum(e, axis=axis)
