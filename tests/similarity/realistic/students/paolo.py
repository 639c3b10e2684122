# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    # shift by the max so exp never overflows
    vals = np.asarray(z, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        sh = vals - np.max(vals, axis=axis, keepdims=True)
        sh = np.nan_to_num(sh, nan=-np.inf)
        top = np.exp(sh)
        bottom = np.sum(top,
                        axis=axis,
                        keepdims=True)
        res = top / bottom
    res[np.isnan(res)] = 0.0   # fully masked rows
    return res
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    q_out = np.dot(X, W_q)
    k_out = np.dot(X, W_k)
    v_out = np.dot(X, W_v)
    return q_out, k_out, v_out
# %% causal_mask
def causal_mask(seq_len):
    below = np.tril(np.ones((seq_len, seq_len), dtype=bool))
    return ~below   # everything above the diagonal
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    width = Q.shape[-1]
    dots = np.matmul(Q,
                     np.swapaxes(K, -2, -1))
    dots_scaled = dots / np.sqrt(width)
    if mask is not None:
        dots_scaled = np.where(mask, -np.inf, dots_scaled)
    attn_w = softmax(dots_scaled, axis=-1)
    ctx = np.matmul(attn_w, V)
    return ctx, attn_w
