# function: attention_cost
# caught-by: test_returns_dict_of_numbers
# misconception: fractional_d_k
# Counts in float arithmetic (d_k = d_model / num_heads), with extra entries: right where num_heads divides d_model, but every count comes back a float, and a fractional head width where it does not.
def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    d_k = d_model / num_heads
    pairs = float(batch_size) * num_heads * seq_len_q * seq_len_k
    return {
        "score_flops": 2.0 * pairs * d_k,
        "mix_flops": 2.0 * pairs * d_k,
        "weights_bytes": pairs * bytes_per_float,
        "weights_megabytes": pairs * bytes_per_float / 1e6,
    }
