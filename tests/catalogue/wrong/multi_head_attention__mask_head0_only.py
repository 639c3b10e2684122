# function: multi_head_attention
# caught-by: test_mask_applies_to_every_head, test_context_gives_cross_attention, test_batched_input, test_inputs_not_modified
# misconception: mask_first_head_only
# Puts the mask into the first head's slot only: the other heads still see the future.
import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(source @ W_k, num_heads)
    V = split_heads(source @ W_v, num_heads)
    if mask is not None:
        head_mask = np.zeros((num_heads, *np.shape(mask)), dtype=bool)
        head_mask[0] = mask
        mask = head_mask
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights
