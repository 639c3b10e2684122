# function: cross_attention
# caught-by: test_queries_from_x_keys_from_context, test_values_match_reference, test_context_order_does_not_matter, test_mask_is_applied, test_batched_input, test_inputs_not_modified
# misconception: values_from_x
# Keys from context but values from X: the values must come from what is attended to.
def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    Q = X @ W_q
    K = context @ W_k
    V = X @ W_v
    return scaled_dot_product_attention(Q, K, V, mask)
