# function: combine_heads
# caught-by: test_inverse_of_split_heads, test_heads_in_order
# misconception: heads_axis_not_moved
# Reshapes (num_heads, seq_len, d_k) straight to (seq_len, d_model) without the axis swap.
def combine_heads(H):
    *lead, num_heads, seq_len, d_k = H.shape
    return H.reshape(*lead, seq_len, num_heads * d_k)
