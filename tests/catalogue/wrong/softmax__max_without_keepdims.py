# function: softmax
# caught-by: test_rows_are_distributions, test_batched_input
# Forgets keepdims=True: the per-row max and sum broadcast along the wrong axis.
import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis))
    return e / np.sum(e, axis=axis)
