# function: split_heads
# caught-by: test_batched_input
# misconception: two_dimensional_only
# Transposes with fixed axes (1, 0, 2), which only fits a single sequence.
def split_heads(X, num_heads):
    seq_len, d_model = X.shape[-2:]
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by num_heads")
    return X.reshape(seq_len, num_heads, d_model // num_heads).transpose(1, 0, 2)
