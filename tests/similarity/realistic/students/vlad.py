# docstrings: own
# %% softmax
def softmax(z, axis=-1):
    """Softmax that is safe when a whole slice is -inf."""
    z = np.asarray(z, dtype=float)
    big = z.max(axis=axis, keepdims=True)
    big = np.where(big > -np.inf, big, 0.0)
    unnorm = np.exp(z - big)
    part = unnorm.sum(axis=axis, keepdims=True)
    part = np.where(part > 0.0, part, 1.0)
    probs = unnorm / part
    return probs
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    """Q = X W_q, K = X W_k, V = X W_v."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    """mask[i, j] is True when j > i."""
    r = np.arange(seq_len)[:, None]
    c = np.arange(seq_len)[None, :]
    return r < c
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Returns (output, weights)."""
    def masked(scores):
        if mask is None:
            return scores
        return np.where(mask, -np.inf, scores)
    scores = masked(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    weights = softmax(scores, axis=-1)
    result = (weights @ V, weights)
    return result
