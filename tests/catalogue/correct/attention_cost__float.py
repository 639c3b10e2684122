# function: attention_cost
# The same counts in float arithmetic (d_k = d_model / num_heads), with extra entries.
def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    d_k = d_model / num_heads
    pairs = float(batch_size) * num_heads * seq_len_q * seq_len_k
    return {
        "score_flops": 2.0 * pairs * d_k,
        "mix_flops": 2.0 * pairs * d_k,
        "weights_bytes": pairs * bytes_per_float,
        "weights_megabytes": pairs * bytes_per_float / 1e6,
    }
