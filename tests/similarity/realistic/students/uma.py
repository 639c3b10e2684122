# docstrings: kept
# %% softmax
def _stable_exp(z, axis):
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)
    return np.exp(z - m)


def softmax(z, axis=-1):
    e = _stable_exp(np.asarray(z, dtype=float), axis)
    s = np.sum(e, axis=axis, keepdims=True)
    return np.where(s > 0, e / np.where(s > 0, s, 1.0), 0.0)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    def project(W):
        return X @ W
    return project(W_q), project(W_k), project(W_v)
# %% causal_mask
def causal_mask(seq_len):
    return ~np.tri(seq_len, dtype=bool)
# %% scaled_dot_product_attention
def _scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


def scaled_dot_product_attention(Q, K, V, mask=None):
    s = _scores(Q, K)
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    a = softmax(s, axis=-1)
    return a @ V, a
