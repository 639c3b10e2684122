# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    nothing_allowed = np.all(np.isneginf(z), axis=axis, keepdims=True)
    z = np.where(nothing_allowed, 0.0, z)
    z = z - z.max(axis=axis, keepdims=True)
    ez = np.exp(z)
    p = ez / ez.sum(axis=axis, keepdims=True)
    return p * ~nothing_allowed
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    lower = np.tril(np.ones((seq_len, seq_len)), k=0)
    return np.logical_not(lower.astype(bool))
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    probs = softmax(scores, axis=-1)
    return probs @ V, probs
