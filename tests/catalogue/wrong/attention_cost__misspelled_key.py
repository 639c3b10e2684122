# function: attention_cost
# caught-by: test_returns_dict_of_numbers, test_score_flops, test_mix_flops, test_weights_bytes, test_quadratic_growth, test_heads_counted
# misconception: missing_key
# Names an entry "mixing_flops": the dict lacks mix_flops, so no entry of it can be read.
def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    weights_elements = batch_size * num_heads * seq_len_q * seq_len_k
    flops = 2 * weights_elements * (d_model // num_heads)
    return {
        "score_flops": flops,
        "mixing_flops": flops,
        "weights_bytes": weights_elements * bytes_per_float,
    }
