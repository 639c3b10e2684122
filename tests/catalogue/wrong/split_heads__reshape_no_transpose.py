# function: split_heads
# caught-by: test_shape, test_head_is_column_block
# caller-keeps-points: multi_head_attention, fails only test_same_with_your_other_functions
# misconception: heads_axis_not_moved
# Reshapes to (seq_len, num_heads, d_k) and forgets to move the head axis first.
def split_heads(X, num_heads):
    *lead, seq_len, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by num_heads")
    return X.reshape(*lead, seq_len, num_heads, d_model // num_heads)
