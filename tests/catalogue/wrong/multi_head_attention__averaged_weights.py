# function: multi_head_attention
# caught-by: test_weights_per_head, test_heads_attend_independently
# misconception: weights_averaged
# Returns the heads' weights averaged into one matrix (as torch's default does), not per head.
def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(source @ W_k, num_heads)
    V = split_heads(source @ W_v, num_heads)
    if mask is not None and mask.ndim >= 2:
        mask = mask[..., None, :, :]  # the same for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights.mean(axis=-3)
