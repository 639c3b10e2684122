# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    z_moved = np.moveaxis(z, axis, -1)
    out = np.zeros_like(z_moved)
    flat_in = z_moved.reshape(-1, z_moved.shape[-1])
    flat_out = out.reshape(-1, z_moved.shape[-1])
    for r in range(flat_in.shape[0]):
        row = flat_in[r]
        if np.all(np.isneginf(row)):
            continue
        e = np.exp(row - row.max())
        flat_out[r] = e / e.sum()
    return np.moveaxis(flat_out.reshape(z_moved.shape), -1, axis)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = np.matmul(X, W_q)
    K = np.matmul(X, W_k)
    V = np.matmul(X, W_v)
    return (Q, K, V)
# %% causal_mask
def causal_mask(seq_len):
    m = np.zeros((seq_len, seq_len), dtype=bool)
    rows, cols = np.triu_indices(seq_len, k=1)
    m[rows, cols] = True
    return m
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    dk = Q.shape[-1]
    KT = np.moveaxis(K, -1, -2)
    scores = np.matmul(Q, KT) / np.sqrt(dk)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    out = np.matmul(weights, V)
    return out, weights
