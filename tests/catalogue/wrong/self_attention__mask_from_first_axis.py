# function: self_attention
# caught-by: test_batched_input
# misconception: length_from_first_axis
# Takes the sequence length from X.shape[0], which is the batch size for a batch.
def self_attention(X, W_q, W_k, W_v, causal=False):
    Q, K, V = create_qkv(X, W_q, W_k, W_v)
    mask = causal_mask(X.shape[0]) if causal else None
    return scaled_dot_product_attention(Q, K, V, mask)
