# function: softmax
# caught-by: test_rows_on_different_scales
# misconception: lower_precision
# Computes in float32 to save memory and casts back to float64: about 7 digits, so scores far from 0 that differ by little lose their differences.
import numpy as np


def softmax(z, axis=-1):
    z32 = np.asarray(z, dtype=np.float32)
    m = np.max(z32, axis=axis, keepdims=True)
    e = np.exp(z32 - np.where(np.isfinite(m), m, np.float32(0)))
    total = np.sum(e, axis=axis, keepdims=True)
    return (e / np.where(total > 0, total, np.float32(1))).astype(np.float64)
