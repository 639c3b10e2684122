# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    """log-sum-exp trick"""
    z = np.asarray(z, dtype=float)
    top = np.max(z, axis=axis, keepdims=True)
    top = np.where(np.isneginf(top), 0.0, top)
    lse = top + np.log(np.sum(np.exp(z - top), axis=axis, keepdims=True))
    with np.errstate(invalid="ignore"):
        p = np.exp(z - lse)
    return np.nan_to_num(p)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    return tuple(np.einsum("...ld,de->...le", X, W) for W in (W_q, W_k, W_v))
# %% causal_mask
def causal_mask(seq_len):
    idx = np.arange(seq_len)
    return idx[:, None] < idx[None, :]
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    logits = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        logits = np.where(mask, -np.inf, logits)
    attn = softmax(logits, axis=-1)
    return np.einsum("...qk,...kv->...qv", attn, V), attn
