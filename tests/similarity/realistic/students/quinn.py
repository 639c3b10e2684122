# docstrings: own
# %% softmax
def softmax(logits, axis=-1):
    """Softmax of logits along axis, stable and safe for -inf rows."""
    a = np.asarray(logits, dtype=np.float64)
    mx = np.max(a, axis=axis, keepdims=True)
    empty = ~np.isfinite(mx)
    ex = np.exp(a - np.where(empty, 0.0, mx))
    norm = np.where(empty, 1.0, np.sum(ex, axis=axis, keepdims=True))
    return ex / norm
# %% create_qkv
def create_qkv(tokens, wq, wk, wv):
    """Projections of the tokens."""
    outs = []
    for w in (wq, wk, wv):
        outs.append(np.matmul(tokens, w))
    return tuple(outs)
# %% causal_mask
def causal_mask(n):
    """True strictly above the diagonal."""
    return np.logical_not(np.tril(np.ones((n, n), dtype=bool)))
# %% scaled_dot_product_attention
def scaled_dot_product_attention(queries, keys, values, mask=None):
    """Attention over the keys, True in the mask = forbidden."""
    perm = (*range(keys.ndim - 2), keys.ndim - 1, keys.ndim - 2)
    d = queries.shape[-1]
    raw = queries @ np.transpose(keys, axes=perm)
    raw = raw / np.sqrt(d)
    if mask is not None:
        raw = np.where(mask, -np.inf, raw)
    probs = softmax(raw, axis=-1)
    return probs @ values, probs
