# function: cross_attention
# caught-by: test_batched_input
# misconception: transpose_all_axes
# Transposes the keys with .T, which reverses every axis of a batch instead of swapping the last two.
def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    Q, K, V = X @ W_q, context @ W_k, context @ W_v
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
