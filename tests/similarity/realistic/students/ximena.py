# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    all_masked = np.all(z == -np.inf, axis=axis, keepdims=True)
    z = np.where(all_masked, 0.0, z)
    z = z - np.max(z, axis=axis, keepdims=True)
    exp = np.exp(z)
    out = exp / np.sum(exp, axis=axis, keepdims=True)
    return np.where(all_masked, 0.0, out)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    mask = np.tril(np.ones((seq_len, seq_len)), k=0)
    mask = 1 - mask
    return mask.astype(bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    dk = Q.shape[-1]
    attention_scores = Q @ np.swapaxes(K, -1, -2)
    attention_scores = attention_scores / np.sqrt(dk)
    if mask is not None:
        attention_scores = np.where(mask, -np.inf, attention_scores)
    attention_probs = softmax(attention_scores, axis=-1)
    return attention_probs @ V, attention_probs
