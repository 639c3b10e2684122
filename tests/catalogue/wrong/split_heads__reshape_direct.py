# function: split_heads
# caught-by: test_head_is_column_block
# misconception: heads_mixed_with_tokens
# Reshapes straight to (num_heads, seq_len, d_k): right shape, but tokens and heads get mixed.
def split_heads(X, num_heads):
    *lead, seq_len, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by num_heads")
    return X.reshape(*lead, num_heads, seq_len, d_model // num_heads)
