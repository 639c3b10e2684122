def split_heads(X, num_heads):
    """Reshapes straight to (num_heads, seq_len, d_k): heads get mixed-up rows."""
    *lead, seq_len, d_model = X.shape
    if d_model % num_heads:
        raise ValueError("d_model must be divisible by num_heads")
    return X.reshape(*lead, num_heads, seq_len, d_model // num_heads)
