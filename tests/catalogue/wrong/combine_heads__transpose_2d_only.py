# function: combine_heads
# caught-by: test_batched_input
# misconception: two_dimensional_only
# Transposes with fixed axes (1, 0, 2), which only fits a single sequence's heads.
def combine_heads(H):
    num_heads, seq_len, d_k = H.shape[-3:]
    return H.transpose(1, 0, 2).reshape(seq_len, num_heads * d_k)
