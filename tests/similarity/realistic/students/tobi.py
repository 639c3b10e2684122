# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    arr = np.array(z, dtype=np.float64)
    mx = arr.max(axis=axis, keepdims=True)
    mx[np.isneginf(mx)] = 0
    ex = np.e ** (arr - mx)
    tot = ex.sum(axis=axis, keepdims=True)
    tot[tot == 0] = np.inf  # anything / inf = 0
    return np.true_divide(ex, tot)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    X = np.asarray(X, dtype=np.float64)
    Q, K, V = np.matmul(X, W_q), np.matmul(X, W_k), np.matmul(X, W_v)
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    m = np.tril(np.ones((seq_len, seq_len)))
    return np.equal(m, 0)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.array(Q, dtype=np.float64), np.array(K, dtype=np.float64), np.array(V, dtype=np.float64)
    scale = Q.shape[-1] ** 0.5
    scores = np.matmul(Q, np.moveaxis(K, -1, -2))
    scores = np.true_divide(scores, scale)
    if mask is not None:
        scores[np.broadcast_to(mask, scores.shape)] = -np.inf
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights
