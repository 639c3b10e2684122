# docstrings: kept
# %% softmax
def softmax(x, axis=-1):
    exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)
# %% create_qkv
def create_qkv(x, W_q, W_k, W_v):
    Q = x @ W_q  # what to look FOR
    K = x @ W_k  # what to be MATCHED against
    V = x @ W_v  # what to actually RETURN
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    mask = np.triu(np.ones((seq_len, seq_len)), k=1).astype(bool)   # True above the diagonal
    return mask
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # Step 1 (Section 4) — SCALED to avoid extreme values
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)   # forbidden positions get -infinity
    attention_weights = softmax(scores)  # Step 2 (Section 4)
    output = attention_weights @ V  # Step 3 (Section 4)
    return output, attention_weights
