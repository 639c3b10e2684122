# function: attention_cost
# caught-by: test_score_flops, test_mix_flops, test_weights_bytes
# misconception: batch_ignored
# Counts a single sequence whatever batch_size says.
def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    d_k = d_model // num_heads
    n = num_heads * seq_len_q * seq_len_k
    return {
        "score_flops": 2 * n * d_k,
        "mix_flops": 2 * n * d_k,
        "weights_bytes": n * bytes_per_float,
    }
