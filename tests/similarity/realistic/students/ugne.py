# docstrings: removed
# %% softmax
def softmax(z, axis=-1):
    shifted = z - np.max(z, axis=axis, keepdims=True)
    exp_z = np.exp(shifted)
    return exp_z / np.sum(exp_z, axis=axis, keepdims=True)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = X @ W_q   # queries -- one per token
    K = X @ W_k   # keys    -- one per token
    V = X @ W_v   # values  -- one per token
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len)), k=1).astype(bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = K.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)   # forbidden positions get -infinity
    weights = softmax(scores)                   # softmax(-inf) -> 0, effectively removing them
    return weights @ V, weights
