# function: softmax
# caught-by: test_rows_are_distributions, test_input_is_not_modified
# misconception: in_place
# Saves memory by shifting, exponentiating and normalising the input array in place.
import numpy as np


def softmax(z, axis=-1):
    m = np.max(z, axis=axis, keepdims=True)
    z -= np.where(np.isfinite(m), m, 0.0)
    np.exp(z, out=z)
    total = np.sum(z, axis=axis, keepdims=True)
    z /= np.where(total > 0, total, 1.0)
    return z
