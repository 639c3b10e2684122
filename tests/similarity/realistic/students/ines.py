# docstrings: kept
# %% softmax
def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    x: np.ndarray = np.asarray(z, dtype=np.float64)
    peak = np.max(x, axis=axis, keepdims=1)
    peak = np.where(np.isfinite(peak), peak, 0)
    num = np.exp(x - peak)
    den = np.sum(num, axis=axis, keepdims=1)
    return np.divide(num, den, where=den > 0, out=np.zeros_like(num))
# %% create_qkv
def create_qkv(X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray):
    X = np.asarray(X, dtype=np.float64)
    proj = lambda W: X @ W
    return proj(W_q), proj(W_k), proj(W_v)
# %% causal_mask
def causal_mask(seq_len: int) -> np.ndarray:
    return np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.asarray(Q, dtype=float), np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    inv_sqrt = 1.0 / np.sqrt(Q.shape[-1])
    logits = inv_sqrt * (Q @ np.swapaxes(K, -1, -2))
    if mask is not None:
        logits = np.where(np.asarray(mask, dtype=bool), -np.inf, logits)
    attn = softmax(logits, axis=logits.ndim - 1)
    return attn @ V, attn
