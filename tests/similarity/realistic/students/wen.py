# docstrings: own
# %% softmax
def softmax(z, axis=-1):
    """softmax(z)_i = exp(z_i - max z) / sum_j exp(z_j - max z)"""
    z = np.asarray(z, np.float64)
    with np.errstate(invalid="ignore"):
        centred = z - np.max(z, axis, keepdims=True)
    centred = np.nan_to_num(centred, nan=-np.inf)
    weights = np.exp(centred)
    Z = np.sum(weights, axis, keepdims=True)
    return np.divide(weights, Z, out=np.zeros_like(weights), where=(Z != 0))
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    """(Q, K, V)"""
    return tuple(np.matmul(X, w) for w in (W_q, W_k, W_v))
# %% causal_mask
def causal_mask(seq_len):
    """mask[i, j] = j > i"""
    pos = np.arange(seq_len)
    return np.greater.outer(pos, pos).T
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V"""
    Q, K, V = map(np.asarray, (Q, K, V))
    logits = np.matmul(Q, np.swapaxes(K, -2, -1)) / np.sqrt(Q.shape[-1])
    if mask is not None:
        logits = np.where(mask, -np.inf, logits)
    weights = softmax(logits, axis=-1)
    return np.matmul(weights, V), weights
