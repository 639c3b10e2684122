# function: scaled_dot_product_attention
# Masks with np.putmask on its own scores, the mask broadcast to them first; guards fully masked rows itself.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    if mask is not None:
        np.putmask(scores, np.broadcast_to(mask, scores.shape), -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1.0)
    return weights @ V, weights
