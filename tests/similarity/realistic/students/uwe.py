# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    # shift by the largest entry; nan from -inf - -inf becomes -inf again
    shifted = z - np.max(z, axis=axis, keepdims=True)
    shifted[np.isnan(shifted)] = -np.inf
    e = np.exp(shifted)
    denom = np.maximum(np.sum(e, axis=axis, keepdims=True), 1e-12)
    return e / denom
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    stacked = np.concatenate((W_q, W_k, W_v), axis=-1)
    QKV = np.matmul(X, stacked)
    n_q = W_q.shape[-1]
    n_k = W_k.shape[-1]
    return QKV[..., :n_q], QKV[..., n_q:n_q + n_k], QKV[..., n_q + n_k:]
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len), dtype=bool), 1)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / float(np.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights
