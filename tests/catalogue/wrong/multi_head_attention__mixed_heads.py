# function: multi_head_attention
# caught-by: test_values_match_reference, test_weights_per_head, test_heads_attend_independently, test_scaled_by_head_d_k, test_output_projected_by_w_o, test_mask_applies_to_every_head, test_context_gives_cross_attention, test_batched_input
# misconception: heads_mixed_with_tokens
# Splits into heads by reshaping straight to (num_heads, seq_len, d_k), mixing tokens and heads.
def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context

    def split(A):
        *lead, n, d = A.shape
        return A.reshape(*lead, num_heads, n, d // num_heads)

    Q, K, V = split(X @ W_q), split(source @ W_k), split(source @ W_v)
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    *lead, h, n, d_k = heads.shape
    return heads.reshape(*lead, n, h * d_k) @ W_o, weights
