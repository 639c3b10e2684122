# function: scaled_dot_product_attention
# np.matmul with K transposed by np.transpose of its last two axes, mask via np.where.
import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=None):
    axes = list(range(K.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.transpose(K, axes)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores)
    output = np.matmul(weights, V)
    return output, weights
