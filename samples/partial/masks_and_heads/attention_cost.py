def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1,
                   bytes_per_float=4):
    """Counts a multiply-add as one FLOP."""
    d_k = d_model // num_heads
    n = batch_size * num_heads * seq_len_q * seq_len_k
    return {"score_flops": n * d_k, "mix_flops": n * d_k, "weights_bytes": n * bytes_per_float}
