# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    log_sum = np.log(np.exp(z - m).sum(axis=axis, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        result = np.exp(z - m - log_sum)
    return np.where(result != result, 0.0, result)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_v
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) * np.reciprocal(np.sqrt(d_k))
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights
