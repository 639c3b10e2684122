# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    z_max = np.max(z, axis=axis, keepdims=True)
    if np.any(np.isinf(z_max)):
        z_max = np.where(np.isinf(z_max), 0, z_max)
    numerator = np.exp(z - z_max)
    denominator = np.sum(numerator, axis=axis, keepdims=True)
    if np.any(denominator == 0):
        denominator = np.where(denominator == 0, 1, denominator)
    return numerator / denominator
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = np.matmul(X, W_q)  # queries
    K = np.matmul(X, W_k)  # keys
    V = np.matmul(X, W_v)  # values
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    future = np.triu(np.ones((seq_len, seq_len), dtype=np.int8), k=1)
    return future.astype(bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    K_T = np.swapaxes(K, -1, -2)
    scores = np.matmul(Q, K_T) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    output = np.matmul(weights, V)
    return output, weights
