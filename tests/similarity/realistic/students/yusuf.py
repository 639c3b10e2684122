# docstrings: kept
# %% softmax
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    z_max = np.max(z, axis=axis, keepdims=True)
    z_max[np.isneginf(z_max)] = 0
    exp_values = np.exp(z - z_max)
    exp_sum = np.sum(exp_values, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = exp_values / exp_sum
    probs[np.isnan(probs)] = 0
    return probs
# %% create_qkv
def create_qkv(X, W_q, W_k, W_v):
    Q = np.dot(X, W_q)
    K = np.dot(X, W_k)
    V = np.dot(X, W_v)
    return Q, K, V
# %% causal_mask
def causal_mask(seq_len):
    return np.triu(np.ones((seq_len, seq_len)), 1).astype(bool)
# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    batch_shape = Q.shape[:-2]
    if batch_shape:
        outs, ws = [], []
        Qf = Q.reshape(-1, *Q.shape[-2:])
        Kf = K.reshape(-1, *K.shape[-2:])
        Vf = V.reshape(-1, *V.shape[-2:])
        for b in range(Qf.shape[0]):
            o, w = scaled_dot_product_attention(Qf[b], Kf[b], Vf[b], mask)
            outs.append(o)
            ws.append(w)
        return (np.stack(outs).reshape(*batch_shape, *outs[0].shape),
                np.stack(ws).reshape(*batch_shape, *ws[0].shape))
    scores = np.dot(Q, K.T) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    w = softmax(scores, axis=-1)
    return np.dot(w, V), w
