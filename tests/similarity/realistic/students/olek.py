# docstrings: removed
# %% softmax
def _row_max(a, ax):
    top = np.max(a, axis=ax, keepdims=True)
    return np.where(top == -np.inf, 0, top)


def softmax(z, axis=-1):
    arr = np.array(z, dtype=float)
    e = np.exp(arr - _row_max(arr, axis))
    tot = np.sum(e, axis=axis, keepdims=True)
    result = np.zeros_like(e)
    np.divide(e, tot, out=result, where=tot != 0)
    return result
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    q = np.matmul(X, W_q)
    k = np.matmul(X, W_k)
    v = np.matmul(X, W_v)
    return q, k, v
# %% causal_mask
def causal_mask(seq_len):
    m = np.zeros((seq_len, seq_len), dtype=bool)
    i = 0
    while i < seq_len:
        j = i + 1
        while j < seq_len:
            m[i, j] = True
            j += 1
        i += 1
    return m
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    kt = np.swapaxes(K, -1, -2)
    s = np.matmul(Q, kt) / np.sqrt(K.shape[-1])
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    w = softmax(s, axis=-1)
    out = np.matmul(w, V)
    return out, w
