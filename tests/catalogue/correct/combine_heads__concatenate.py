# function: combine_heads
# The heads concatenated in order along the feature axis.
import numpy as np


def combine_heads(H):
    return np.concatenate([H[..., h, :, :] for h in range(H.shape[-3])], axis=-1)
