# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    # YOUR CODE HERE
    exp_z = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return exp_z / np.sum(exp_z, axis=axis, keepdims=True)
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    # YOUR CODE HERE
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    # YOUR CODE HERE
    return np.triu(np.ones((seq_len, seq_len)), k=1).astype(bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    # YOUR CODE HERE
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    if mask is not None:
        scores = scores + mask * -1e9
    attention_weights = softmax(scores)
    output = attention_weights @ V
    print(attention_weights.shape)
    return output, attention_weights
