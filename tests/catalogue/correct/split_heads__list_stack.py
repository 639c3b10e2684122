# function: split_heads
# One column block per head, taken by slicing in a list comprehension and stacked.
import numpy as np


def split_heads(X, num_heads):
    d_model = X.shape[-1]
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    d_k = d_model // num_heads
    return np.stack([X[..., h * d_k : (h + 1) * d_k] for h in range(num_heads)], axis=-3)
