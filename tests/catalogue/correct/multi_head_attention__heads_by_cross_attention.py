# function: multi_head_attention
# A loop over the heads, each head cross_attention of its column blocks (the source being X itself without a context).
import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    d_k = W_q.shape[1] // num_heads
    outs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        out, w = cross_attention(X, source, W_q[:, cols], W_k[:, cols], W_v[:, cols], mask)
        outs.append(out)
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ W_o, np.stack(weights, axis=-3)
