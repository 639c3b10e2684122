# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    biggest = np.max(z, axis=axis, keepdims=True)
    biggest[np.isinf(biggest)] = 0
    ez = np.exp(z - biggest)
    norm = ez.sum(axis=axis, keepdims=True)
    norm[norm == 0.0] = 1.0
    return ez / norm
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return tuple(X @ W for W in (W_q, W_k, W_v))
# %% causal_mask
def causal_mask(seq_len):
    return ~np.tri(seq_len, seq_len, k=0, dtype=bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.swapaxes(-2, -1)
    scores = scores / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = scores.copy()
        scores[np.broadcast_to(mask, scores.shape)] = -np.inf
    weights = softmax(scores)
    return weights @ V, weights
