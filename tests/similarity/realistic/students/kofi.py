# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    # YOUR CODE HERE
    z = np.asarray(z, dtype=float)
    maximum = np.max(z, axis=axis, keepdims=True)
    maximum[maximum == -np.inf] = 0
    exponentials = np.exp(z - maximum)
    sum_of_exponentials = np.sum(exponentials, axis=axis, keepdims=True)
    sum_of_exponentials[sum_of_exponentials == 0] = 1
    probabilities = exponentials / sum_of_exponentials
    return probabilities
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    # YOUR CODE HERE
    queries = X @ W_q
    keys = X @ W_k
    values = X @ W_v
    return queries, keys, values
# %% causal_mask
def causal_mask(seq_len):
    # YOUR CODE HERE
    all_ones = np.ones((seq_len, seq_len))
    upper_triangle = np.triu(all_ones, k=1)
    boolean_mask = upper_triangle.astype(bool)
    return boolean_mask
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    # YOUR CODE HERE
    d_k = Q.shape[-1]
    keys_transposed = np.swapaxes(K, -1, -2)
    raw_scores = Q @ keys_transposed
    scaled_scores = raw_scores / np.sqrt(d_k)
    if mask is not None:
        scaled_scores = np.where(mask, -np.inf, scaled_scores)
    attention_weights = softmax(scaled_scores, axis=-1)
    output = attention_weights @ V
    return output, attention_weights
