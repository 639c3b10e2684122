# function: cross_attention
# caught-by: test_queries_from_x_keys_from_context, test_values_match_reference, test_mask_is_applied
# misconception: values_from_wrong_matrix
# Projects the values with W_k (copy-paste slip): the right shape only when W_v is as wide as W_k.
def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    Q = X @ W_q
    K = context @ W_k
    V = context @ W_k
    return scaled_dot_product_attention(Q, K, V, mask)
