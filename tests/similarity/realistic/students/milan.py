# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(z - m)
    s = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(s > 0, s, 1.0)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_v
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
