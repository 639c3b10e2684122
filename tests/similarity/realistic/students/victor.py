# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.array(z, dtype=float)
    results = np.zeros(z.shape)
    max_vals = np.max(z, axis=axis, keepdims=True)
    for idx in np.ndindex(max_vals.shape):
        if max_vals[idx] == -np.inf:
            max_vals[idx] = 0
    exps = np.exp(z - max_vals)
    sums = np.sum(exps, axis=axis, keepdims=True)
    nonzero = sums != 0
    results = np.where(nonzero, exps / np.where(nonzero, sums, 1), 0)
    return results
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    mask = []
    for i in range(seq_len):
        row = []
        for j in range(seq_len):
            row.append(j > i)
        mask.append(row)
    return np.array(mask)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    K_transpose = np.swapaxes(K, -1, -2)
    scores = Q @ K_transpose
    scores = scores / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    output = weights @ V
    return output, weights
