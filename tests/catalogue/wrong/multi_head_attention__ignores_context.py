# function: multi_head_attention
# caught-by: test_context_gives_cross_attention, test_batched_input, test_inputs_not_modified
# misconception: context_ignored
# Always attends within X: the context argument is never used.
def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(X @ W_k, num_heads)
    V = split_heads(X @ W_v, num_heads)
    if mask is not None and mask.ndim >= 2:
        mask = mask[..., None, :, :]  # the same for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights
