# function: multi_head_attention
# caught-by: test_inputs_not_modified
# misconception: in_place
# Folds 1/sqrt(d_k) into W_q in place (W_q /= ...): the caller's W_q changes, and a read-only W_q raises.
def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    W_q /= np.sqrt(W_q.shape[-1] // num_heads)
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(source @ W_k, num_heads)
    V = split_heads(source @ W_v, num_heads)
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask[..., None, :, :] if mask.ndim >= 2 else mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return combine_heads(weights @ V) @ W_o, weights
