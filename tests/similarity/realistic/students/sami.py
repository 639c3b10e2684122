# docstrings: kept
# %% softmax
def _guarded_max(z, axis):
    m = np.max(z, axis=axis, keepdims=True)
    return np.where(m == -np.inf, 0.0, m)


def _normalise(z_exp, norm):
    res = np.zeros_like(z_exp)
    ok = np.broadcast_to(norm > 0, z_exp.shape)
    res[ok] = (z_exp / np.where(norm > 0, norm, 1.0))[ok]
    return res


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    if z.size == 0:
        return z.copy()
    z_exp = np.exp(z - _guarded_max(z, axis))
    return _normalise(z_exp, np.sum(z_exp, axis=axis, keepdims=True))
# %% create_qkv
def _as64(a):
    return np.asarray(a, dtype=np.float64)


def create_qkv(X, W_q, W_k, W_v):
    X = _as64(X)
    return X @ _as64(W_q), X @ _as64(W_k), X @ _as64(W_v)
# %% causal_mask
def causal_mask(seq_len):
    mask = np.ones((seq_len, seq_len), dtype=bool)
    return np.triu(mask, k=1)
# %% scaled_dot_product_attention
def _scaled_scores(Q, K):
    d_k = Q.shape[-1]
    return (Q @ np.swapaxes(K, -1, -2)) / np.sqrt(d_k)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    scores = _scaled_scores(Q, K)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
