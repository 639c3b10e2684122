# function: attention_cost
# caught-by: test_returns_dict_of_numbers
# misconception: fractional_d_k
# Takes d_k = d_model / num_heads and rounds the counts to ints at the end: a fractional head width when num_heads does not divide d_model, where the course text's d_k is d_model // num_heads.
def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    d_k = d_model / num_heads
    pairs = batch_size * num_heads * seq_len_q * seq_len_k
    return {
        "score_flops": round(2 * pairs * d_k),
        "mix_flops": round(2 * pairs * d_k),
        "weights_bytes": pairs * bytes_per_float,
    }
