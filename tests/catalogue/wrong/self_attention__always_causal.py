# function: self_attention
# caught-by: test_values_match_reference, test_permutation_equivariance
# misconception: causal_always
# Applies the causal mask whatever causal says: unmasked self-attention then depends on order.
def self_attention(X, W_q, W_k, W_v, causal=False):
    Q, K, V = create_qkv(X, W_q, W_k, W_v)
    return scaled_dot_product_attention(Q, K, V, causal_mask(X.shape[-2]))
