# function: create_qkv
# np.tensordot over X's last axis and W's first: any leading axes of X come along.
import numpy as np


def create_qkv(X, W_q, W_k, W_v):
    return tuple(np.tensordot(X, W, axes=([-1], [0])) for W in (W_q, W_k, W_v))
