# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    # YOUR CODE HERE
    z = np.asarray(z, dtype=float)
    exps = np.exp(z - np.max(z, axis=axis, keepdims=True))
    exps = np.nan_to_num(exps)
    sums = np.sum(exps, axis=axis, keepdims=True)
    sums[sums == 0] = 1
    return exps / sums
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    # YOUR CODE HERE
    return (X @ W_q, X @ W_k, X @ W_v)
# %% causal_mask
def causal_mask(seq_len):
    # YOUR CODE HERE
    mask = np.triu(np.ones((seq_len, seq_len)), k=1).astype(bool)
    return mask
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    # YOUR CODE HERE
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(*range(K.ndim - 2), -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    attention_weights = softmax(scores, axis=-1)
    return attention_weights @ V, attention_weights
