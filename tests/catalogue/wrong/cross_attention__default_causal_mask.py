# function: cross_attention
# caught-by: test_queries_from_x_keys_from_context, test_values_match_reference, test_context_order_does_not_matter, test_mask_is_applied, test_batched_input, test_inputs_not_modified
# misconception: default_causal_mask
# Builds a causal mask when none is given, as self-attention's causal=True does: with mask=None cross-attention has no mask at all, and a (seq_len_q, seq_len_q) mask does not fit (seq_len_q, seq_len_k) scores.
def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    if mask is None:
        mask = causal_mask(X.shape[-2])
    return scaled_dot_product_attention(X @ W_q, context @ W_k, context @ W_v, mask)
