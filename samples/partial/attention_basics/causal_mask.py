def causal_mask(seq_len):
    """tril instead of triu: forbids the past and allows the future."""
    return np.tril(np.ones((seq_len, seq_len)), k=-1).astype(bool)
