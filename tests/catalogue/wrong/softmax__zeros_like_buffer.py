# function: softmax
# caught-by: test_rows_are_distributions
# misconception: result_in_input_dtype
# Fills its result into np.zeros_like(z): integer scores give integer weights, all 0 or 1.
import numpy as np


def softmax(z, axis=-1):
    out = np.zeros_like(z)
    m = np.max(z, axis=axis, keepdims=True)
    e = np.exp(z - np.where(np.isfinite(m), m, 0))
    total = np.sum(e, axis=axis, keepdims=True)
    out[...] = e / np.where(total > 0, total, 1)
    return out
