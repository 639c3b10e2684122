# function: multi_head_attention
# caught-by: test_mask_applies_to_every_head, test_context_gives_cross_attention, test_inputs_not_modified
# misconception: mask_head_axis_always
# Gives every mask a head axis with mask[..., None, :, :]: a key mask (seq_len_k,) has no second-to-last axis to keep.


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(source @ W_k, num_heads)
    V = split_heads(source @ W_v, num_heads)
    if mask is not None:
        mask = mask[..., None, :, :]
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights
