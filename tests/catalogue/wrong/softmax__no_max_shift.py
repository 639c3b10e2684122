# function: softmax
# caught-by: test_large_inputs_do_not_overflow
# softmax straight from its definition: np.exp(1000) overflows without the max shift.
import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)
