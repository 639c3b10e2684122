# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    try:
        z = np.asarray(z, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("softmax needs numbers")
    with np.errstate(invalid="ignore", divide="ignore"):
        z = z - np.max(z, axis=axis, keepdims=True)
        z = np.where(np.isnan(z), -np.inf, z)
        expz = np.exp(z)
        total = np.sum(expz, axis=axis, keepdims=True)
        probs = expz / total
    return np.where(total == 0, 0.0, probs)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return np.dot(X, W_q), np.dot(X, W_k), np.dot(X, W_v)
# %% causal_mask
def causal_mask(seq_len):
    out = np.zeros((seq_len, seq_len), dtype=bool)
    for i in range(seq_len):
        for j in range(seq_len):
            out[i, j] = j > i
    return out
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    try:
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            scores = np.where(mask, -np.inf, scores)
        weights = softmax(scores, axis=-1)
        output = weights @ V
    except ValueError as err:
        raise ValueError(f"shapes do not fit: {err}")
    return output, weights
