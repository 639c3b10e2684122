# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    values = np.asarray(z, dtype=float)
    largest = np.max(values, axis=axis, keepdims=True)
    largest = np.nan_to_num(largest, neginf=0.0, posinf=0.0)
    powered = np.exp(values - largest)
    summed = powered.sum(axis=axis, keepdims=True)
    return np.divide(powered, summed, out=np.zeros_like(powered), where=summed != 0)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q, K, V = (np.matmul(X, W) for W in (W_q, W_k, W_v))
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    upper = np.triu(np.ones((seq_len, seq_len)), k=1)
    return upper > 0
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=float)
    scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    scores = scores / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    attention = softmax(scores, axis=-1)
    return np.matmul(attention, V), attention
