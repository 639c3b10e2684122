# function: softmax
# caught-by: test_rows_are_distributions, test_honours_axis, test_batched_input
# caller-keeps-points: scaled_dot_product_attention, fails only test_same_with_your_other_functions
# misconception: last_axis_is_1
# Takes the last axis to be axis 1, as it is for a matrix: right for 2-D input, wrong for 1-D and 3-D.
import numpy as np


def softmax(z, axis=-1):
    a = 1 if axis == -1 else axis
    m = np.max(z, axis=a, keepdims=True)
    e = np.exp(z - np.where(np.isfinite(m), m, 0.0))
    total = np.sum(e, axis=a, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
