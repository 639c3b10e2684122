# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    # numerically stable: subtract max first
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = z - np.max(z, axis=axis, keepdims=True)
        shifted = np.nan_to_num(shifted, nan=-np.inf)
        numerator = np.exp(shifted)
        denominator = np.sum(numerator, axis=axis, keepdims=True)
        result = numerator / denominator
    result[np.isnan(result)] = 0.0
    return result
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    queries = np.dot(X, W_q)
    keys = np.dot(X, W_k)
    values = np.dot(X, W_v)
    return queries, keys, values
# %% causal_mask
def causal_mask(seq_len):
    lower = np.tril(np.ones((seq_len, seq_len), dtype=bool))
    return ~lower
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    raw_scores = np.matmul(Q, np.swapaxes(K, -2, -1))
    scaled = raw_scores / np.sqrt(d_k)
    if mask is not None:
        scaled = np.where(mask, -np.inf, scaled)
    attention_weights = softmax(scaled, axis=-1)
    context = np.matmul(attention_weights, V)
    return context, attention_weights
