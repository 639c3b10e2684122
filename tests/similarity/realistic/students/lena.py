# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    if z.size == 0:
        return z.copy()
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(m == -np.inf, 0.0, m)
    z_exp = np.exp(z - m)
    norm = np.sum(z_exp, axis=axis, keepdims=True)
    res = np.zeros_like(z_exp)
    ok = np.broadcast_to(norm > 0, z_exp.shape)
    res[ok] = (z_exp / np.where(norm > 0, norm, 1.0))[ok]
    return res
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    X = np.asarray(X, dtype=np.float64)
    return (X @ np.asarray(W_q, dtype=np.float64),
            X @ np.asarray(W_k, dtype=np.float64),
            X @ np.asarray(W_v, dtype=np.float64))
# %% causal_mask
def causal_mask(seq_len):
    mask = np.ones((seq_len, seq_len), dtype=bool)
    mask = np.triu(mask, k=1)
    return mask
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    d_k = Q.shape[-1]
    scores = (Q @ np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
