# function: self_attention
# caught-by: test_values_match_reference
# misconception: values_unprojected
# Uses X itself as the values (no W_v): the right shape only when d_v == d_model.
def self_attention(X, W_q, W_k, W_v, causal=False):
    Q, K = X @ W_q, X @ W_k
    mask = causal_mask(X.shape[-2]) if causal else None
    return scaled_dot_product_attention(Q, K, X, mask)
