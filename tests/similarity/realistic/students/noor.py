# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    zmax = np.max(z, axis=axis, keepdims=True)
    zmax = np.where(np.isneginf(zmax), 0.0, zmax)
    exp_shifted = np.exp(z - zmax)
    denom = np.sum(exp_shifted, axis=axis, keepdims=True)
    result = np.zeros_like(exp_shifted)
    np.divide(exp_shifted, denom, out=result, where=denom > 0)
    return result
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = np.einsum("...nd,dk->...nk", X, W_q)
    K = np.einsum("...nd,dk->...nk", X, W_k)
    V = np.einsum("...nd,dv->...nv", X, W_v)
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    positions = np.arange(seq_len)
    return positions[None, :] > positions[:, None]
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.einsum("...qd,...kd->...qk", Q, K)
    scores = scores / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    output = np.einsum("...qk,...kd->...qd", weights, V)
    return output, weights
