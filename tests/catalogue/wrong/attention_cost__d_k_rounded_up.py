# function: attention_cost
# caught-by: test_returns_dict_of_numbers
# misconception: d_k_rounded_up
# Rounds the head width up (ceiling division) "so that no column is lost": the course text's d_k is d_model // num_heads.
def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    d_k = -(-d_model // num_heads)
    pairs = batch_size * num_heads * seq_len_q * seq_len_k
    return {
        "score_flops": 2 * pairs * d_k,
        "mix_flops": 2 * pairs * d_k,
        "weights_bytes": pairs * bytes_per_float,
    }
