# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    # YOUR CODE HERE
    z = np.asarray(z, dtype=float)
    shifted = z - np.max(z, axis=axis, keepdims=True)
    shifted = np.where(np.isnan(shifted), -np.inf, shifted)
    e = np.exp(shifted)
    s = e.sum(axis=axis, keepdims=True)
    s[s == 0] = 1
    return e / s
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    # YOUR CODE HERE
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    # YOUR CODE HERE
    m = np.ones((seq_len, seq_len), dtype=bool)
    return np.triu(m, k=1)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    # YOUR CODE HERE
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores)
    output = weights @ V
    return output, weights
