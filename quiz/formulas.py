"""The attention course's named formulas: they compute the answers of templated questions
(and of typical wrong answers).

Banks refer to these functions by name (``template: head_dim``); a function's keyword parameters
are the bank parameters it uses. Nothing here is typed in by hand per variant: every answer a
student is graded against comes out of one of these functions. The engine loads this file by
path (course.toml names it).
"""

from __future__ import annotations

import math

from attention_course.quiz.formulas import Shape, formula

MIB = 2**20
FLOAT32_BYTES = 4


# --- scaled dot-product attention -------------------------------------------------------------


@formula
def score_scale(d_k: int) -> float:
    """The number raw scores are divided by: sqrt(d_k)."""
    return math.sqrt(d_k)


@formula
def score_scale_unsquared(d_k: int) -> float:
    """Wrong: dividing by d_k itself."""
    return float(d_k)


@formula
def score_scale_inverse(d_k: int) -> float:
    """Wrong: the factor the scores are multiplied by, 1/sqrt(d_k)."""
    return 1.0 / math.sqrt(d_k)


# --- multi-head attention ---------------------------------------------------------------------


@formula
def head_dim(d_model: int, num_heads: int) -> int:
    """Width of one head when d_model is split across the heads."""
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    return d_model // num_heads


@formula
def head_dim_unsplit(d_model: int) -> int:
    """Wrong: every head as wide as the model."""
    return d_model


@formula
def head_dim_multiplied(d_model: int, num_heads: int) -> int:
    """Wrong: multiplying instead of splitting."""
    return d_model * num_heads


@formula
def mha_param_count(d_model: int) -> int:
    """W_q, W_k, W_v and W_o, each (d_model, d_model), no biases."""
    return 4 * d_model * d_model


@formula
def mha_param_count_no_output(d_model: int) -> int:
    """Wrong: forgetting the output projection W_o."""
    return 3 * d_model * d_model


@formula
def mha_param_count_full_width_heads(d_model: int, num_heads: int) -> int:
    """Wrong: every head with its own full (d_model, d_model) projections."""
    return 4 * num_heads * d_model * d_model


@formula
def mha_param_count_one_head(d_model: int, num_heads: int) -> int:
    """Wrong: counting the projections of one head only (plus W_o)."""
    return 3 * d_model * head_dim(d_model, num_heads) + d_model * d_model


# --- cost -------------------------------------------------------------------------------------


@formula
def score_matrix_growth(growth: int) -> int:
    """Growth of the (seq_len, seq_len) score matrix when seq_len grows ``growth`` times."""
    return growth * growth


@formula
def linear_growth(growth: int) -> int:
    """Wrong: linear growth."""
    return growth


@formula
def weights_mib(long_seq_len: int, num_heads: int, batch_size: int) -> float:
    """MiB of float32 attention weights: batch x heads x seq_len x seq_len x 4 bytes."""
    return batch_size * num_heads * long_seq_len * long_seq_len * FLOAT32_BYTES / MIB


@formula
def weights_mib_one_head(long_seq_len: int, batch_size: int) -> float:
    """Wrong: one (averaged) weight matrix instead of one per head."""
    return batch_size * long_seq_len * long_seq_len * FLOAT32_BYTES / MIB


@formula
def weights_mib_linear(long_seq_len: int, num_heads: int, batch_size: int) -> float:
    """Wrong: memory linear in the sequence length."""
    return batch_size * num_heads * long_seq_len * FLOAT32_BYTES / MIB


@formula
def weights_mib_no_batch(long_seq_len: int, num_heads: int) -> float:
    """Wrong: forgetting the batch dimension."""
    return num_heads * long_seq_len * long_seq_len * FLOAT32_BYTES / MIB


@formula
def weights_mib_float64(long_seq_len: int, num_heads: int, batch_size: int) -> float:
    """Wrong: 8 bytes per number although the question says float32."""
    return 2 * weights_mib(long_seq_len, num_heads, batch_size)


# --- shapes -----------------------------------------------------------------------------------


@formula
def shape_q(seq_len: int, d_k: int) -> Shape:
    """Q = X @ W_q."""
    return (seq_len, d_k)


@formula
def shape_q_transposed(seq_len: int, d_k: int) -> Shape:
    """Wrong: rows and columns swapped."""
    return (d_k, seq_len)


@formula
def shape_q_model_width(seq_len: int, d_model: int) -> Shape:
    """Wrong: Q as wide as X."""
    return (seq_len, d_model)


@formula
def shape_k_transposed(seq_len: int, d_k: int) -> Shape:
    """K^T."""
    return (d_k, seq_len)


@formula
def shape_scores(seq_len: int) -> Shape:
    """Q K^T: one score per (query, key) pair."""
    return (seq_len, seq_len)


@formula
def shape_scores_dk(seq_len: int, d_k: int) -> Shape:
    """Wrong: the scores as wide as the keys."""
    return (seq_len, d_k)


@formula
def shape_scores_inner(d_k: int) -> Shape:
    """Wrong: Q^T K, the (d_k, d_k) product."""
    return (d_k, d_k)


@formula
def shape_output(seq_len: int, d_v: int) -> Shape:
    """weights @ V: one d_v-wide vector per query."""
    return (seq_len, d_v)


@formula
def shape_output_dk(seq_len: int, d_k: int) -> Shape:
    """Wrong: the output as wide as the keys."""
    return (seq_len, d_k)


@formula
def shape_per_head_weights(num_heads: int, seq_len: int) -> Shape:
    """multi_head_attention's weights: one (seq_len, seq_len) matrix per head."""
    return (num_heads, seq_len, seq_len)


@formula
def shape_averaged_weights(seq_len: int) -> Shape:
    """Wrong: heads averaged (torch.nn.MultiheadAttention's default)."""
    return (seq_len, seq_len)


@formula
def shape_head_width_weights(seq_len: int, d_model: int, num_heads: int) -> Shape:
    """Wrong: the weights confused with the per-head outputs."""
    return (num_heads, seq_len, head_dim(d_model, num_heads))
