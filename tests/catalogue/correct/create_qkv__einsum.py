# function: create_qkv
# The three projections with an einsum over any leading dimensions.
import numpy as np


def create_qkv(X, W_q, W_k, W_v):
    Q = np.einsum("...sd,dk->...sk", X, W_q)
    K = np.einsum("...sd,dk->...sk", X, W_k)
    V = np.einsum("...sd,dv->...sv", X, W_v)
    return Q, K, V
