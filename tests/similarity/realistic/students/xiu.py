# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    if True:
        vals = np.asarray(z, dtype=float)
        top = np.max(vals, axis=axis, keepdims=True)
        top = np.nan_to_num(top, posinf=0.0, neginf=0.0)
        powered = np.exp(vals - top)
        total = np.add.reduce(powered, axis=axis, keepdims=True)
    return np.divide(powered, total, where=total != 0, out=np.zeros_like(powered))
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q, K, V = [np.matmul(X, W) for W in (W_q, W_k, W_v)]
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len)), k=1) > 0
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=float)
    raw = np.matmul(Q, np.swapaxes(K, -1, -2))
    raw = raw / Q.shape[-1] ** .5
    if mask is not None:
        raw = np.where(mask, -np.inf, raw)
    attention = softmax(raw, axis=-1)
    return np.matmul(attention, V), attention
