# function: multi_head_attention
# caught-by: test_context_gives_cross_attention
# misconception: values_from_wrong_matrix
# With a context, projects its keys with W_v and its values with W_k (all weights are square).
def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    if context is None:
        K, V = X @ W_k, X @ W_v
    else:
        K, V = context @ W_v, context @ W_k
    Q = split_heads(X @ W_q, num_heads)
    K, V = split_heads(K, num_heads), split_heads(V, num_heads)
    if mask is not None and mask.ndim >= 2:
        mask = mask[..., None, :, :]  # the same for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights
