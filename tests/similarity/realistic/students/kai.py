# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    # YOUR CODE HERE
    z = np.asarray(z, dtype=float)
    max_z = np.max(z, axis=axis, keepdims=True)
    e = np.exp(z - max_z)
    return e / np.sum(e, axis=axis, keepdims=True)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    # YOUR CODE HERE
    Q = np.dot(X, W_q)
    K = np.dot(X, W_k)
    V = np.dot(X, W_v)
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    # YOUR CODE HERE
    mask = np.triu(np.ones((seq_len, seq_len)), k=1)
    return mask.astype(bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    # YOUR CODE HERE
    d_k = K.shape[-1]
    scores = np.dot(Q, K.T) / np.sqrt(d_k)
    if mask is not None:
        scores[mask] = -1e9
    weights = softmax(scores)
    output = np.dot(weights, V)
    return output, weights
