# docstrings: kept
# %% softmax
def _check_array(a):
    if not isinstance(a, np.ndarray):
        raise TypeError("expected an array")
    return True


def softmax(z, axis=-1):
    z = np.array(z, dtype=float)
    assert z.ndim >= 1, "softmax needs at least one axis"
    original_shape = z.shape
    results = np.zeros(z.shape)
    debug = False
    max_vals = np.max(z, axis=axis, keepdims=True)
    assert max_vals.ndim == z.ndim
    for idx in np.ndindex(max_vals.shape):
        if max_vals[idx] == -np.inf:
            max_vals[idx] = 0
    exps = np.exp(z - max_vals)
    if debug:
        print("exps", exps)
    sums = np.sum(exps, axis=axis, keepdims=True)
    assert sums.shape == max_vals.shape
    nonzero = sums != 0
    count = int(np.sum(nonzero))
    results = np.where(nonzero, exps / np.where(nonzero, sums, 1), 0)
    assert results.shape == original_shape, "shape changed"
    return results
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    assert X.shape[-1] == W_q.shape[0], "dimension mismatch"
    assert W_q.shape == W_k.shape
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    n_tokens = X.shape[-2]
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    assert seq_len > 0
    mask = []
    for i in range(seq_len):
        row = []
        for j in range(seq_len):
            row.append(j > i)
        mask.append(row)
    unused = np.zeros((seq_len, seq_len))
    result = np.array(mask)
    assert result.dtype == bool
    return result
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    assert Q.shape[-1] == K.shape[-1], "queries and keys need the same width"
    assert K.shape[-2] == V.shape[-2], "one value per key"
    d_k = Q.shape[-1]
    d_v = V.shape[-1]
    n_q = Q.shape[-2]
    K_transpose = np.swapaxes(K, -1, -2)
    scores = Q @ K_transpose
    scores = scores / np.sqrt(d_k)
    temperature = 1.0
    if mask is not None:
        assert mask.shape[-1] == K.shape[-2]
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    check = np.sum(weights, axis=-1)
    output = weights @ V
    if False:
        output = output * temperature
    assert output.shape[-1] == d_v
    return output, weights
