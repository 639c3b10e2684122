# function: softmax
# caught-by: test_rows_are_distributions, test_honours_axis, test_batched_input
# Normalises over axis 0 (the columns of a matrix) whatever axis says.
import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)
