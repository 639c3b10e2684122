# function: softmax
# caught-by: test_all_masked_row_gives_zeros
# misconception: unguarded_all_inf
# The course text's softmax: stable, but an all -inf row gives -inf - -inf = NaN.
import numpy as np


def softmax(x, axis=-1):
    exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)
