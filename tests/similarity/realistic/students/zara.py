# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    mx = np.max(z, axis=axis, keepdims=True)
    safe_mx = np.where(np.isfinite(mx), mx, 0.0)
    e = np.exp(z - safe_mx)
    denom = np.sum(e, axis=axis, keepdims=True)
    safe_denom = np.where(denom == 0.0, 1.0, denom)
    return e / safe_denom
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = np.tensordot(X, W_q, axes=([-1], [0]))
    K = np.tensordot(X, W_k, axes=([-1], [0]))
    V = np.tensordot(X, W_v, axes=([-1], [0]))
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.full((seq_len, seq_len), 1), k=1).astype(bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    scores = np.where(mask, -np.inf, scores) if mask is not None else scores
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
