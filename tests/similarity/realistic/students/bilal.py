# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    # YOUR CODE HERE
    z = np.array(z, dtype=float)
    z_max = np.max(z, axis=axis, keepdims=True)
    z_max = np.where(z_max == -np.inf, 0, z_max)
    e = np.exp(z - z_max)
    s = np.sum(e, axis=axis, keepdims=True)
    out = np.zeros_like(e)
    np.divide(e, s, out=out, where=s != 0)
    return out
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    # YOUR CODE HERE
    return np.matmul(X, W_q), np.matmul(X, W_k), np.matmul(X, W_v)
# %% causal_mask
def causal_mask(seq_len):
    # YOUR CODE HERE
    mask = np.zeros((seq_len, seq_len), dtype=bool)
    for i in range(seq_len):
        for j in range(seq_len):
            if j > i:
                mask[i, j] = True
    return mask
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    # YOUR CODE HERE
    d_k = K.shape[-1]
    K_t = np.swapaxes(K, -1, -2)
    scores = np.matmul(Q, K_t)
    scores = scores / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask == True, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights
