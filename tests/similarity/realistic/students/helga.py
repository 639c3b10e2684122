# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    finite = np.isfinite(z)
    shift = np.max(np.where(finite, z, -np.finfo(float).max), axis=axis, keepdims=True)
    e = np.where(finite, np.exp(np.minimum(z - shift, 0.0)), 0.0)
    norm = np.sum(e, axis=axis, keepdims=True)
    norm[norm == 0] = 1.0
    return e / norm
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    X = np.asarray(X)
    return np.matmul(X, W_q), np.matmul(X, W_k), np.matmul(X, W_v)
# %% causal_mask
def causal_mask(seq_len):
    return np.tril(np.ones((seq_len, seq_len), dtype=bool), k=-1).T
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(t, dtype=float) for t in (Q, K, V))
    s = Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    weights = softmax(s, -1)
    return weights @ V, weights
