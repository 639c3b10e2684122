# function: cross_attention
# caught-by: test_mask_is_applied
# misconception: mask_ignored
# Forgets to pass the mask on to scaled_dot_product_attention.
def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    Q = X @ W_q
    K = context @ W_k
    V = context @ W_v
    return scaled_dot_product_attention(Q, K, V)
