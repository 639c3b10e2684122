# function: self_attention
# caught-by: test_causal_masks_the_future, test_causal_future_does_not_leak
# misconception: causal_ignored
# Accepts causal=True but never builds the mask: every token sees the future.
def self_attention(X, W_q, W_k, W_v, causal=False):
    Q, K, V = create_qkv(X, W_q, W_k, W_v)
    return scaled_dot_product_attention(Q, K, V)
