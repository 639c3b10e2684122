# function: cross_attention
# Multi-head attention of one head with a context, W_o the identity.
import numpy as np


def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    out, weights = multi_head_attention(
        X, W_q, W_k, W_v, np.eye(W_v.shape[1]), 1, mask=mask, context=context
    )
    return out, weights[..., 0, :, :]
