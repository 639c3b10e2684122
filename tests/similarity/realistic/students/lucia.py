# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    mask_rows = np.isneginf(z).all(axis=axis, keepdims=True)
    stable = z - np.max(np.where(mask_rows, 0.0, z), axis=axis, keepdims=True)
    e = np.exp(stable)
    denom = np.sum(e, axis=axis, keepdims=True) + mask_rows
    return e / denom
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
