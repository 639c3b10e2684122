# function: create_qkv
# caught-by: test_batched_input
# misconception: two_dimensional_only
# An einsum string written for a single sequence ('ij,jk->ik') rejects batches.
import numpy as np


def create_qkv(X, W_q, W_k, W_v):
    return tuple(np.einsum("ij,jk->ik", X, W) for W in (W_q, W_k, W_v))
