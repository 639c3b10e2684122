# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    # move the axis to the end, normalise, move it back
    arr = np.asarray(z, dtype=float)
    arr = np.swapaxes(arr, axis, -1)
    top = arr.max(-1, keepdims=True)
    top[~np.isfinite(top)] = 0
    e = np.exp(arr - top)
    total = e.sum(-1, keepdims=True)
    e = e / np.where(total == 0, 1, total)
    return np.swapaxes(e, axis, -1)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    projected = []
    for matrix in (W_q, W_k, W_v):
        projected.append(X @ matrix)
    Q, K, V = projected
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    length = seq_len
    return np.arange(length)[None, :] > np.arange(length)[:, None]
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    scale = Q.shape[-1] ** -0.5
    scores = scale * (Q @ K.swapaxes(-1, -2))
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    attn = softmax(scores)
    return attn @ V, attn
