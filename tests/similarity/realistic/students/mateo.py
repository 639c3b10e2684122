# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    z_shift = z - np.max(z, axis=axis, keepdims=True)
    z_shift[np.isnan(z_shift)] = -np.inf
    e = np.exp(z_shift)
    return e / np.maximum(e.sum(axis=axis, keepdims=True), 1e-300)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    W = np.concatenate([W_q, W_k, W_v], axis=-1)
    QKV = X @ W
    d_q, d_k = W_q.shape[-1], W_k.shape[-1]
    return QKV[..., :d_q], QKV[..., d_q:d_q + d_k], QKV[..., d_q + d_k:]
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.full((seq_len, seq_len), True), 1)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.matmul(Q, K.swapaxes(-1, -2)) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    w = softmax(scores, -1)
    return np.matmul(w, V), w
