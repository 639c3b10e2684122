"""The code of the course text (/work/shared/course-text/), as students read it.

A known source for `attention-course similarity` (course.toml's [similarity] base): what
students share because they took it from the course text counts as common, and their matching
lines are shown as "from the course text". Never run, never released: the course text is
already the students'.
"""

# ---- "Attention and Transformers: The Attention Mechanism" (chapter-attention-mechanism.txt)
# Section 3: queries, keys and values
import numpy as np


def create_qkv(x, W_q, W_k, W_v):
    """x: input vectors, shape (seq_len, d_model)"""
    Q = x @ W_q  # what to look FOR
    K = x @ W_k  # what to be MATCHED against
    V = x @ W_v  # what to actually RETURN
    return Q, K, V


# Section 5: scaled dot-product attention
def softmax(x, axis=-1):
    exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # Step 1 (Section 4) — SCALED to avoid extreme values
    attention_weights = softmax(scores)  # Step 2 (Section 4)
    output = attention_weights @ V  # Step 3 (Section 4)
    return output, attention_weights


# Section 6: a full worked example
np.random.seed(42)
x = np.random.randn(3, 4)
d_model, d_k = 4, 4
W_q = np.random.randn(d_model, d_k) * 0.5
W_k = np.random.randn(d_model, d_k) * 0.5
W_v = np.random.randn(d_model, d_k) * 0.5
Q, K, V = x @ W_q, x @ W_k, x @ W_v  # Section 3
output, weights = scaled_dot_product_attention(Q, K, V)
print(np.round(weights, 3))
print(np.round(output, 3))

# ---- "Week 15: The Attention Mechanism" (week15-attention-mechanism.txt)
# 1. Queries, keys and values
d_model = 8  # embedding dimension
seq_len = 4
X = np.random.randn(seq_len, d_model)  # 4 tokens, each an 8-dim embedding
W_q = np.random.randn(d_model, d_model) * 0.1
W_k = np.random.randn(d_model, d_model) * 0.1
W_v = np.random.randn(d_model, d_model) * 0.1
Q = X @ W_q  # queries -- one per token
K = X @ W_k  # keys    -- one per token
V = X @ W_v  # values  -- one per token


# 2. Scaled dot-product attention, step by step
def softmax(z):  # noqa: F811 - the week's own softmax, after the chapter's
    shifted = z - np.max(z, axis=-1, keepdims=True)
    exp_z = np.exp(shifted)
    return exp_z / np.sum(exp_z, axis=-1, keepdims=True)


def attention(Q, K, V):
    d_k = K.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # (seq_len, seq_len) -- every query vs. every key
    weights = softmax(scores)  # each row sums to 1 -- a distribution over "which tokens matter"
    return weights @ V  # weighted sum of values, per query


output = attention(Q, K, V)  # shape: (seq_len, d_model) -- one context-aware vector per token


# 3. Multi-head attention
def multi_head_attention(X, num_heads, d_model):
    d_k = d_model // num_heads
    outputs = []

    for _ in range(num_heads):
        W_q = np.random.randn(d_model, d_k) * 0.1
        W_k = np.random.randn(d_model, d_k) * 0.1
        W_v = np.random.randn(d_model, d_k) * 0.1
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        outputs.append(attention(Q, K, V))  # each head's own (seq_len, d_k) output

    concatenated = np.concatenate(outputs, axis=-1)  # back to (seq_len, d_model)
    W_o = np.random.randn(d_model, d_model) * 0.1
    return concatenated @ W_o  # final learned mixing of all heads' information


# 4. Self-attention vs. cross-attention, and attention masks
# A causal mask prevents a token from attending to future tokens --
# essential for a model that generates text left-to-right, one token at a time
seq_len = 4
mask = np.triu(np.ones((seq_len, seq_len)), k=1).astype(bool)  # True above the diagonal


def masked_attention(Q, K, V, mask):
    d_k = K.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    scores = np.where(mask, -np.inf, scores)  # forbidden positions get -infinity
    weights = softmax(scores)  # softmax(-inf) -> 0, effectively removing them
    return weights @ V
