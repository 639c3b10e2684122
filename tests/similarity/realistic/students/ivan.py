# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    mx = np.max(z, axis=axis, keepdims=True)
    mx = np.nan_to_num(mx, neginf=0.0)
    num = np.exp(z - mx)
    den = np.sum(num, axis=axis, keepdims=True)
    den = np.where(den == 0, 1, den)
    return num / den
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    q = X @ W_q
    k = X @ W_k
    v = X @ W_v
    return q, k, v
# %% causal_mask
def causal_mask(seq_len):
    ones = np.ones((seq_len, seq_len), dtype=int)
    upper = np.triu(ones, k=1)
    return upper == 1
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    scores /= np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    attn = softmax(scores, axis=-1)
    return np.matmul(attn, V), attn
