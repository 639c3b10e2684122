# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)
    e = np.exp(z - m)
    s = np.sum(e, axis=axis, keepdims=True)
    return np.where(s > 0, e / np.where(s > 0, s, 1.0), 0.0)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_v
# %% causal_mask
def causal_mask(seq_len):
    return ~np.tri(seq_len, dtype=bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    a = softmax(s, axis=-1)
    return a @ V, a
