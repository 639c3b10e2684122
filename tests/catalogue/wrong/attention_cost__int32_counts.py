# function: attention_cost
# caught-by: test_score_flops, test_mix_flops, test_weights_bytes
# misconception: int32_overflow
# Counts with numpy int32 arrays "to stay an int": long sequences wrap around past 2**31.
import numpy as np


def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    sizes = np.array([batch_size, num_heads, seq_len_q, seq_len_k], dtype=np.int32)
    pairs = np.prod(sizes, dtype=np.int32)
    d_k = np.int32(d_model // num_heads)
    return {
        "score_flops": int(2 * pairs * d_k),
        "mix_flops": int(2 * pairs * d_k),
        "weights_bytes": int(pairs * bytes_per_float),
    }
