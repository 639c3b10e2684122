# function: multi_head_attention
# caught-by: test_mask_applies_to_every_head, test_batched_input
# misconception: two_dimensional_only
# Splits the heads with transpose(1, 0, 2), which only fits a single sequence.
def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context

    def split(A):
        seq_len, d_model = A.shape[-2:]
        return A.reshape(seq_len, num_heads, d_model // num_heads).transpose(1, 0, 2)

    Q, K, V = split(X @ W_q), split(source @ W_k), split(source @ W_v)
    if mask is not None and mask.ndim >= 2:
        mask = mask[..., None, :, :]  # the same for every head
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)
    return combine_heads(heads) @ W_o, weights
