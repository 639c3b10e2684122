# docstrings: own
# %% softmax
def softmax(z, axis=-1):
    """Softmax with a guard for rows with no allowed entries."""
    z = np.asarray(z, dtype=float)
    biggest = np.max(z, axis=axis, keepdims=True)
    biggest = np.where(biggest > -np.inf, biggest, 0.0)
    unnormalised = np.exp(z - biggest)
    partition = np.sum(unnormalised, axis=axis, keepdims=True)
    partition = np.where(partition > 0.0, partition, 1.0)
    return unnormalised / partition
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    """Projections: Q = X W_q etc."""
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    """Boolean (seq_len, seq_len) with True where j > i."""
    row = np.arange(seq_len)[:, np.newaxis]
    col = np.arange(seq_len)[np.newaxis, :]
    return col > row
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Returns (output, weights)."""
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2)
    scores = scores / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    output = weights @ V
    return output, weights
