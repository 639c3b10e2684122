# function: softmax
# caught-by: test_all_masked_row_gives_zeros
# misconception: nan_patched_afterwards
# Turns the NaN of a slice of only -inf into 0 afterwards (np.nan_to_num): the zeros are right, but the 0 / 0 still warns.
import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return np.nan_to_num(e / np.sum(e, axis=axis, keepdims=True))
