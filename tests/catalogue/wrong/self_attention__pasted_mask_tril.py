# function: self_attention
# caught-by: test_same_with_your_pasted_helpers
# misconception: causal_wrong_triangle
# Right, but the pasted causal_mask is np.tril (True = allowed): the helper is named, at no cost here.
def causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len))).astype(bool)


def self_attention(X, W_q, W_k, W_v, causal=False):
    Q, K, V = create_qkv(X, W_q, W_k, W_v)
    mask = causal_mask(X.shape[-2]) if causal else None
    return scaled_dot_product_attention(Q, K, V, mask)
