# function: softmax
# Works through np.exp of the shifted scores with np.errstate guards instead of np.where.
import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    m = np.max(z, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):
        shifted = z - m  # -inf - (-inf) is nan for a fully masked slice
    e = np.exp(np.nan_to_num(shifted, nan=-np.inf))
    total = e.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = e / total
    return np.nan_to_num(out, nan=0.0)
