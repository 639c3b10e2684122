# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    shift = np.max(z, axis=axis, keepdims=True)
    shift[~np.isfinite(shift)] = 0.0  # an all -inf slice: shift by nothing
    exps = np.exp(z - shift)
    total = exps.sum(axis=axis, keepdims=True)
    total[total == 0] = 1.0
    return exps / total
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    mask = np.triu(np.ones((seq_len, seq_len)), k=1)
    return mask.astype(bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores)
    output = weights @ V
    return output, weights
