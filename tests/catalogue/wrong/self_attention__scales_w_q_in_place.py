# function: self_attention
# caught-by: test_inputs_not_modified
# misconception: in_place
# Folds 1/sqrt(d_k) into the query weights in place (W_q /= ...): the caller's W_q changes.
def self_attention(X, W_q, W_k, W_v, causal=False):
    W_q /= np.sqrt(W_q.shape[-1])  # the scale once, in the weights
    Q, K, V = create_qkv(X, W_q, W_k, W_v)
    scores = Q @ np.swapaxes(K, -1, -2)
    if causal:
        scores = np.where(causal_mask(X.shape[-2]), -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
