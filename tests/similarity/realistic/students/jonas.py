# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    z = np.swapaxes(z, axis, -1)      # work on the last axis
    mx = z.max(-1, keepdims=True)
    mx[~np.isfinite(mx)] = 0
    ez = np.exp(z - mx)
    s = ez.sum(-1, keepdims=True)
    ez = ez / np.where(s == 0, 1, s)
    return np.swapaxes(ez, axis, -1)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    res = []
    for W in (W_q, W_k, W_v):
        res.append(X @ W)
    Q, K, V = res
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    n = seq_len
    return np.arange(n)[None, :] > np.arange(n)[:, None]
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    factor = Q.shape[-1] ** -0.5
    s = factor * (Q @ K.swapaxes(-1, -2))
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    w = softmax(s)
    return w @ V, w
