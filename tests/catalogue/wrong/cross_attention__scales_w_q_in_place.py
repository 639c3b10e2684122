# function: cross_attention
# caught-by: test_inputs_not_modified
# misconception: in_place
# Scales the queries' weights in place (W_q *= 1/sqrt(d_k)) to save the division: the caller's W_q changes.
def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    W_q *= 1 / np.sqrt(W_q.shape[-1])
    Q, K, V = X @ W_q, context @ W_k, context @ W_v
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
