# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    zm = np.moveaxis(z, axis, -1)
    om = np.moveaxis(out, axis, -1)
    for index in np.ndindex(zm.shape[:-1]):
        row = zm[index]
        if np.isneginf(row).all():
            om[index] = 0.0
        else:
            shifted = np.exp(row - np.max(row))
            om[index] = shifted / shifted.sum()
    return out
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = np.matmul(X, W_q)
    K = np.matmul(X, W_k)
    V = np.matmul(X, W_v)
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    result = np.full((seq_len, seq_len), False)
    for row in range(seq_len):
        result[row, row + 1:] = True
    return result
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    output = np.matmul(weights, V)
    return output, weights
