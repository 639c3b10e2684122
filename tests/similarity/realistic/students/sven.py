# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    z = np.swapaxes(z, axis, -1)
    peak = z.max(-1, keepdims=True)
    peak[~np.isfinite(peak)] = 0
    w = np.exp(z - peak)
    norm = w.sum(-1, keepdims=True)
    w = w / np.where(norm == 0, 1, norm)
    return np.swapaxes(w, axis, -1)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    out = []
    for weight in (W_q, W_k, W_v):
        out.append(X @ weight)
    Q, K, V = out
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    n = seq_len
    return np.arange(n)[None, :] > np.arange(n)[:, None]
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    scale = Q.shape[-1] ** -0.5
    scores = scale * (Q @ K.swapaxes(-1, -2))
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    p = softmax(scores)
    return p @ V, p
