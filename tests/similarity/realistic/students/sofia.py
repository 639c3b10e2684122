# docstrings: own
# %% softmax
def softmax(z, axis=-1):
    """Probabilities along an axis; slices with no finite entry give zeros."""
    z = np.asarray(z, dtype=float)
    keep = np.any(np.isfinite(z), keepdims=True, axis=axis)
    e = np.exp(np.where(keep, z, -np.inf) - np.max(np.where(keep, z, 0.0), keepdims=True, axis=axis))
    return np.true_divide(e, np.where(keep, np.sum(e, keepdims=True, axis=axis), 1.0))
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    """Projections."""
    Q = np.matmul(X, W_q)
    K = np.matmul(X, W_k)
    V = np.matmul(X, W_v)
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    """j > i is forbidden."""
    rows, cols = np.meshgrid(np.arange(seq_len), np.arange(seq_len), indexing="ij")
    return cols > rows
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Weights = softmax(Q K^T / sqrt(d)); output = weights V."""
    logits = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    if mask is not None:
        logits = np.where(mask, -np.inf, logits)
    attention = softmax(logits, axis=-1)
    return np.matmul(attention, V), attention
