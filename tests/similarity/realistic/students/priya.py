# docstrings: own
# %% softmax
def softmax(z, axis=-1):
    """Returns probabilities along `axis` (stable, -inf safe)."""
    z = np.asarray(z, dtype=float)
    keep = np.isfinite(z).any(axis=axis, keepdims=True)
    z_max = np.max(np.where(keep, z, 0.0), axis=axis, keepdims=True)
    e = np.exp(np.where(keep, z, -np.inf) - z_max)
    return e / np.where(keep, e.sum(axis=axis, keepdims=True), 1.0)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    """Q, K, V projections."""
    return np.matmul(X, W_q), np.matmul(X, W_k), np.matmul(X, W_v)
# %% causal_mask
def causal_mask(seq_len):
    """Upper-triangular boolean mask."""
    i, j = np.indices((seq_len, seq_len))
    return j > i
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    """softmax(QK^T/sqrt(d)) V"""
    d_k = Q.shape[-1]
    attn_logits = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        attn_logits = np.where(mask, -np.inf, attn_logits)
    attn = softmax(attn_logits, axis=-1)
    values = np.matmul(attn, V)
    return values, attn
