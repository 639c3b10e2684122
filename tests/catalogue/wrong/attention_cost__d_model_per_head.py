# function: attention_cost
# caught-by: test_returns_dict_of_numbers, test_score_flops, test_mix_flops, test_heads_counted
# misconception: full_width_per_head
# Lets every head work at the full width d_model instead of d_k = d_model // num_heads.
def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    n = batch_size * num_heads * seq_len_q * seq_len_k
    return {
        "score_flops": 2 * n * d_model,
        "mix_flops": 2 * n * d_model,
        "weights_bytes": n * bytes_per_float,
    }
