# function: multi_head_attention
# caught-by: test_same_with_your_pasted_helpers
# misconception: softmax_over_queries
# Right, but the pasted scaled_dot_product_attention normalises over the queries: the helper is named, at no cost here.
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-2)
    return weights @ V, weights


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(source @ W_k, num_heads)
    V = split_heads(source @ W_v, num_heads)
    if mask is not None and mask.ndim >= 2:
        mask = mask[..., None, :, :]  # the same for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights
