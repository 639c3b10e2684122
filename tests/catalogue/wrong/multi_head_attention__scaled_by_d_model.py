# function: multi_head_attention
# caught-by: test_values_match_reference, test_weights_per_head, test_scaled_by_head_d_k, test_mask_applies_to_every_head, test_context_gives_cross_attention
# misconception: scaled_by_d_model
# Scales every head's scores by sqrt(d_model) instead of sqrt of the head's d_k.
import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    source = X if context is None else context
    d_model = W_q.shape[-1]
    Q = split_heads(X @ W_q, num_heads)
    K = split_heads(source @ W_k, num_heads)
    V = split_heads(source @ W_v, num_heads)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_model)
    if mask is not None:
        scores = np.where(mask[..., None, :, :] if mask.ndim >= 2 else mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return combine_heads(weights @ V) @ W_o, weights
