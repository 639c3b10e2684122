# function: softmax
# caught-by: test_large_inputs_do_not_overflow
# misconception: shift_by_min
# Shifts each slice by its minimum instead of its maximum: the exponents stay large and positive, and np.exp overflows on a slice of large scores.
import numpy as np


def softmax(z, axis=-1):
    m = np.min(z, axis=axis, keepdims=True)
    e = np.exp(z - np.where(np.isfinite(m), m, 0.0))
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
