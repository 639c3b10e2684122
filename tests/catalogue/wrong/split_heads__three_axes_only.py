# function: split_heads
# caught-by: test_shape, test_head_is_column_block, test_batched_input, test_input_not_modified
# misconception: fixed_number_of_axes
# Unpacks the shape as batch, seq_len, d_model = X.shape: only a batch of sequences fits, not one sequence alone, nor two batch axes.


def split_heads(X, num_heads):
    batch, seq_len, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by num_heads")
    H = X.reshape(batch, seq_len, num_heads, d_model // num_heads)
    return H.transpose(0, 2, 1, 3)
