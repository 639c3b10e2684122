# function: softmax
# caught-by: test_rows_are_distributions
# misconception: result_in_input_dtype
# Saves memory with np.exp(..., out=buffer) into np.empty_like(z): a buffer of integers cannot take the exponentials.
import numpy as np


def softmax(z, axis=-1):
    m = np.max(z, axis=axis, keepdims=True)
    e = np.empty_like(z)
    np.exp(z - np.where(np.isfinite(m), m, 0), out=e)
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1)
