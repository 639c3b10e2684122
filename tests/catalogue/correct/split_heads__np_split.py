# function: split_heads
# np.split into num_heads column blocks (which raises ValueError itself when they are unequal), stacked before the positions.
import numpy as np


def split_heads(X, num_heads):
    try:
        blocks = np.split(X, num_heads, axis=-1)
    except ValueError as exc:
        raise ValueError(f"{X.shape[-1]} columns do not split into {num_heads} heads") from exc
    return np.stack(blocks, axis=-3)
