# function: softmax
# caught-by: test_all_masked_row_gives_zeros
# misconception: guard_on_last_axis_only
# Shifts and normalises along `axis`, but looks for slices of only -inf along the last axis, as if they were always rows.
import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    dead = np.isneginf(z).all(axis=-1, keepdims=True)  # slices of only -inf, as rows
    m = np.max(np.where(dead, 0.0, z), axis=axis, keepdims=True)
    e = np.where(dead, 0.0, np.exp(z - m))
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
