# function: cross_attention
# caught-by: test_same_with_your_pasted_helpers
# misconception: no_scaling
# Right, but the pasted scaled_dot_product_attention forgets 1/sqrt(d_k): the helper is named, at no cost here.
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def cross_attention(X, context, W_q, W_k, W_v, mask=None):
    return scaled_dot_product_attention(X @ W_q, context @ W_k, context @ W_v, mask)
