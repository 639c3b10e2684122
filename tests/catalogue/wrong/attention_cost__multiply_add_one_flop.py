# function: attention_cost
# caught-by: test_score_flops, test_mix_flops
# misconception: multiply_add_one_flop
# Counts one multiply-add as 1 FLOP instead of 2.
def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    d_k = d_model // num_heads
    n = batch_size * num_heads * seq_len_q * seq_len_k
    return {"score_flops": n * d_k, "mix_flops": n * d_k, "weights_bytes": n * bytes_per_float}
