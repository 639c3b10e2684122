# function: softmax
# caught-by: test_honours_axis, test_all_masked_row_gives_zeros
# misconception: fixed_axis
# Accepts axis but always normalises over the last axis.
import numpy as np


def softmax(z, axis=-1):
    m = np.max(z, axis=-1, keepdims=True)
    e = np.exp(z - np.where(np.isfinite(m), m, 0.0))
    total = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
