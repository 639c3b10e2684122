# function: softmax
# A 1-D softmax applied along the axis with np.apply_along_axis; integer scores become floats.
import numpy as np


def _softmax_1d(v):
    v = v.astype(float)
    top = v.max()
    if not np.isfinite(top):
        return np.zeros_like(v)
    e = np.exp(v - top)
    return e / e.sum()


def softmax(z, axis=-1):
    z = np.asarray(z)
    return np.apply_along_axis(_softmax_1d, axis, z).astype(float)
