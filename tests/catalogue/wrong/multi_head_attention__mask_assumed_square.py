# function: multi_head_attention
# caught-by: test_context_gives_cross_attention, test_batched_input, test_inputs_not_modified
# misconception: mask_assumed_square
# Spreads the mask over the heads by broadcasting it to (..., num_heads, seq_len, seq_len), the square scores of self-attention: with a context of another length the mask no longer fits.
import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(source @ W_k, num_heads)
    V = split_heads(source @ W_v, num_heads)
    if mask is not None:
        n = X.shape[-2]
        mask = np.asarray(mask)
        if mask.ndim >= 2:
            mask = mask[..., None, :, :]
        mask = np.broadcast_to(mask, (*X.shape[:-2], num_heads, n, n))
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights
