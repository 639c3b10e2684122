# function: combine_heads
# np.moveaxis puts the heads axis after the positions, then one reshape.
import numpy as np


def combine_heads(H):
    moved = np.moveaxis(H, -3, -2)  # (..., seq_len, num_heads, d_k)
    return moved.reshape(*moved.shape[:-2], -1)
