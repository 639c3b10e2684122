# docstrings: own
# %% softmax
def softmax(z, axis=-1):
    """Probability distribution over `axis`."""
    data = np.array(z, dtype=np.float64)
    assert data.ndim > 0
    with np.errstate(invalid="ignore"):
        top = data.max(axis, keepdims=True)
        diff = data - top
    diff = np.nan_to_num(diff, nan=float("-inf"))
    p = np.e ** diff
    norm = p.sum(axis, keepdims=True)
    buffer = np.zeros_like(p)
    return np.divide(p, norm, out=buffer, where=(norm != 0))
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    """Returns Q, K, V"""
    mats = (W_q, W_k, W_v)
    return tuple(X.dot(m) for m in mats)
# %% causal_mask
def causal_mask(seq_len):
    """mask[r, c] is True when c > r"""
    idx = np.arange(seq_len)
    greater = np.greater.outer(idx, idx)
    return np.transpose(greater)
# %% scaled_dot_product_attention
def _logits(a, b):
    kt = np.moveaxis(b, -1, -2)
    return np.dot(a, kt) if a.ndim == 2 else np.matmul(a, kt)


def scaled_dot_product_attention(Q, K, V, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V and the weights"""
    V, Q, K = map(np.asarray, (V, Q, K))
    dim = Q.shape[-1]
    s = _logits(Q, K) * dim ** -0.5
    print("scores", s.shape)
    if mask is not None:
        s = np.where(mask, float("-inf"), s)
    probs = softmax(s, axis=-1)
    result = np.matmul(probs, V)
    return result, probs
