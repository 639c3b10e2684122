# docstrings: own
# %% softmax
def softmax(z, axis=-1):
    """Softmax along axis. Handles rows that are entirely -inf."""
    x = np.asarray(z, dtype=float)
    m = x.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    ex = np.exp(x - m)
    denom = ex.sum(axis=axis, keepdims=True)
    return np.divide(ex, denom, out=np.zeros_like(ex), where=denom > 0)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    """Linear projections of X."""
    X = np.asarray(X, dtype=float)
    return X @ W_q, X @ W_k, X @ W_v
# %% causal_mask
def causal_mask(seq_len):
    """True above the diagonal."""
    return np.triu(np.ones((seq_len, seq_len), dtype=bool), 1)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Scaled dot-product attention, batched."""
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    V = np.asarray(V, dtype=float)
    scale = 1.0 / np.sqrt(Q.shape[-1])
    s = (Q @ K.swapaxes(-1, -2)) * scale
    if mask is not None:
        s = np.where(np.asarray(mask, dtype=bool), -np.inf, s)
    w = softmax(s, axis=-1)
    return w @ V, w
