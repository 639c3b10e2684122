# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    with np.errstate(invalid="ignore"):
        z = z - z.max(axis=axis, keepdims=True)
    z = np.where(np.isnan(z), -np.inf, z)
    expz = np.exp(z)
    total = expz.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = expz / total
    return np.where(total == 0, 0.0, probs)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return X.dot(W_q), X.dot(W_k), X.dot(W_v)
# %% causal_mask
def causal_mask(seq_len):
    return np.array([[j > i for j in range(seq_len)] for i in range(seq_len)], dtype=bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)
    scores = scores / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    output = weights @ V
    return output, weights
