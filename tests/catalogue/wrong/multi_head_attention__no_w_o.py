# function: multi_head_attention
# caught-by: test_values_match_reference, test_output_projected_by_w_o, test_mask_applies_to_every_head, test_context_gives_cross_attention
# misconception: no_output_projection
# Combines the heads but forgets the output projection W_o.
def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(source @ W_k, num_heads)
    V = split_heads(source @ W_v, num_heads)
    if mask is not None and mask.ndim >= 2:
        mask = mask[..., None, :, :]  # the same for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads), weights
