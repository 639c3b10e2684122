# docstrings: own
# %% softmax
def softmax(z, axis=-1):
    """Stable softmax: exp(z - max) / sum(exp(z - max)), all -inf slices -> 0."""
    arr = np.asarray(z, dtype=np.float64)
    peak = np.max(arr, axis=axis, keepdims=True)
    dead = ~np.isfinite(peak)          # slices with nothing allowed
    peak = np.where(dead, 0.0, peak)
    e = np.exp(arr - peak)
    e_sum = np.sum(e, axis=axis, keepdims=True)
    e_sum = np.where(dead, 1.0, e_sum)
    return e / e_sum
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    """Return the three projections."""
    projections = []
    for W in (W_q, W_k, W_v):
        projections.append(np.matmul(X, W))
    return tuple(projections)
# %% causal_mask
def causal_mask(seq_len):
    """Strict upper triangle of True."""
    return np.logical_not(np.tril(np.ones((seq_len, seq_len), dtype=bool)))
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Batched attention, True in mask = forbidden."""
    d_k = Q.shape[-1]
    logits = Q @ np.transpose(K, axes=(*range(K.ndim - 2), K.ndim - 1, K.ndim - 2))
    logits = logits / np.sqrt(d_k)
    if mask is not None:
        logits = np.where(mask, -np.inf, logits)
    p = softmax(logits, axis=-1)
    return p @ V, p
