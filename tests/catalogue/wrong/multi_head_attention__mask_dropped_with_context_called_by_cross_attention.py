# function: multi_head_attention
# caught-by: test_context_gives_cross_attention
# caller-keeps-points: cross_attention, fails only test_same_with_your_other_functions
# misconception: mask_ignored_with_context
# Takes the cross-attention branch as a copy of the self-attention one and forgets the mask there; cross_attention (right) is multi-head attention of one head with a context.
import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    if context is None:
        Q, K, V = (split_heads(X @ W, num_heads) for W in (W_q, W_k, W_v))
        if mask is not None and np.ndim(mask) >= 2:
            mask = np.expand_dims(mask, -3)
        heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    else:
        Q = split_heads(X @ W_q, num_heads)
        K, V = (split_heads(context @ W, num_heads) for W in (W_k, W_v))
        heads, weights = scaled_dot_product_attention(Q, K, V)
    return combine_heads(heads) @ W_o, weights


def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    out, weights = multi_head_attention(
        X, W_q, W_k, W_v, np.eye(W_v.shape[1]), 1, mask=mask, context=context
    )
    return out, weights[..., 0, :, :]
