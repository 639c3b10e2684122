# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    z_max = np.max(z, axis=axis, keepdims=True)
    z_max = np.where(np.isinf(z_max), 0, z_max)
    log_sum = np.log(np.sum(np.exp(z - z_max), axis=axis, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        result = np.exp(z - z_max - log_sum)
    return np.where(np.isnan(result), 0.0, result)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return np.matmul(X, W_q), np.matmul(X, W_k), np.matmul(X, W_v)
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.ones(shape=(seq_len, seq_len), dtype=bool), k=1)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) * (1.0 / np.sqrt(d_k))
    if mask is not None:
        scores = np.where(mask, np.NINF if hasattr(np, "NINF") else -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights
