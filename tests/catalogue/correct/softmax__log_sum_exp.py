# function: softmax
# softmax as exp(z - logsumexp(z)), with the all -inf slice guarded.
import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    s = np.sum(np.exp(z - m), axis=axis, keepdims=True)
    lse = m + np.log(np.where(s > 0, s, 1.0))
    return np.exp(z - lse)
