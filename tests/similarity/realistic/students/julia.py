# docstrings: own
# %% softmax
def softmax(z, axis=-1):
    """Numerically stable softmax."""
    z = np.asarray(z, dtype=float)
    result = np.zeros_like(z)
    max_z = np.max(z, axis=axis, keepdims=True)
    valid = np.isfinite(max_z)
    shifted = z - np.where(valid, max_z, 0)
    exp_z = np.exp(shifted)
    sum_exp = np.sum(exp_z, axis=axis, keepdims=True)
    result = np.where(valid, exp_z / np.where(valid, sum_exp, 1), result)
    return result
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    """Q, K, V."""
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    """Causal mask."""
    mask = np.zeros((seq_len, seq_len), dtype=bool)
    mask[np.triu_indices(seq_len, 1)] = True
    return mask
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Scaled dot-product attention."""
    d_k = Q.shape[-1]
    K_T = np.swapaxes(K, -1, -2)
    scores = Q @ K_T / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores)
    return weights @ V, weights
