# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    arr = np.asarray(z, dtype=float)
    mx = np.max(arr, axis=axis, keepdims=True)
    mx[np.isneginf(mx)] = 0
    ex = np.exp(arr - mx)
    tot = np.sum(ex, axis=axis, keepdims=True)
    tot[tot == 0] = np.inf  # anything / inf = 0
    return ex / tot
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    X = np.array(X, dtype=float)
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    m = np.tril(np.ones((seq_len, seq_len)))
    return m == 0
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.asarray(Q, float), np.asarray(K, float), np.asarray(V, float)
    scale = np.sqrt(Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2)
    scores = scores / scale
    if mask is not None:
        scores[np.broadcast_to(mask, scores.shape)] = -np.inf
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
