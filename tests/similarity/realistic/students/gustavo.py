# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    maxes = np.amax(z, axis=axis, keepdims=True)
    maxes[np.isinf(maxes)] = 0
    exp_z = np.exp(z - maxes)
    sums = np.sum(exp_z, axis=axis, keepdims=True)
    sums[sums == 0.0] = 1.0
    return exp_z / sums
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return [X @ W for W in [W_q, W_k, W_v]]
# %% causal_mask
def causal_mask(seq_len):
    return np.tri(seq_len, seq_len, k=0, dtype=bool) == False
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.swapaxes(-2, -1)
    scores = scores / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, float("-inf"), scores)
    weights = softmax(scores)
    return weights @ V, weights
