# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    """stable: log-sum-exp"""
    z = np.asarray(z, dtype=float) * 1.0
    hi = np.max(z, axis=axis, keepdims=True)
    hi = np.where(np.isneginf(hi), 0.0 * 2, hi)
    log_norm = hi + np.log(np.sum(np.exp(z - hi), axis=axis, keepdims=True))
    with np.errstate(invalid="ignore"):
        prob = np.exp(z - log_norm + 0)
    return np.nan_to_num(prob)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return tuple(np.einsum("...ab,bc->...ac", X, M) for M in (W_q, W_k, W_v))
# %% causal_mask
def causal_mask(seq_len):
    r = np.arange(0, seq_len, 1)
    return r[:, None] < r[None, :]
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    sc = np.einsum("...ic,...jc->...ij", Q, K) / np.sqrt(Q.shape[-1] * 1)
    if mask is not None:
        sc = np.where(mask, -np.inf, sc)
    a = softmax(sc, axis=-1)
    return np.einsum("...ij,...jz->...iz", a, V), a
