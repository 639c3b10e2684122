# function: attention_cost
# caught-by: test_weights_bytes, test_heads_counted
# misconception: one_weight_matrix
# Stores one weight matrix for all heads, as if they were averaged.
def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    d_k = d_model // num_heads
    n = batch_size * num_heads * seq_len_q * seq_len_k
    weights_bytes = batch_size * seq_len_q * seq_len_k * bytes_per_float
    return {"score_flops": 2 * n * d_k, "mix_flops": 2 * n * d_k, "weights_bytes": weights_bytes}
