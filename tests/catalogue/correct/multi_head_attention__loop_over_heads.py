# function: multi_head_attention
# A Python loop over heads, each using its own column block of W_q, W_k, W_v.
import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    d_k = W_q.shape[1] // num_heads
    outputs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        out, w = scaled_dot_product_attention(
            X @ W_q[:, cols], source @ W_k[:, cols], source @ W_v[:, cols], mask
        )
        outputs.append(out)
        weights.append(w)
    return np.concatenate(outputs, axis=-1) @ W_o, np.stack(weights, axis=-3)
