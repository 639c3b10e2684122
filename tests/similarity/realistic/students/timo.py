# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    if not isinstance(z, np.ndarray):
        z = np.array(z)
    z = np.asarray(z, dtype=np.float64)
    shift = np.max(z, axis=axis, keepdims=True)
    shift[~np.isfinite(shift)] = 0.0
    exps = np.exp(z - shift)
    total = exps.sum(axis=axis, keepdims=True)
    total[total == 0] = 1.0
    out = exps / total
    return out
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_v
# %% causal_mask
def causal_mask(seq_len):
    idx = np.arange(seq_len)
    return idx[None, :] > idx[:, None]
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    if Q.ndim < 2 or K.ndim < 2:
        raise ValueError("Q and K need two axes")
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None and np.any(mask):
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores)
    output = weights @ V
    return output, weights
