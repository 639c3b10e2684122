# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    maxima = np.max(z, axis=axis, keepdims=True)
    fully_masked = np.isneginf(maxima)
    maxima[fully_masked] = 0.0
    e = np.exp(z - maxima)
    total = np.sum(e, axis=axis, keepdims=True)
    total[fully_masked] = 1.0
    return e / total
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_v
# %% causal_mask
def causal_mask(seq_len):
    return ~np.tril(np.ones((seq_len, seq_len), dtype=bool))
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights
