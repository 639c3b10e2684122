# function: attention_cost
# Counts in numpy int64 (an int too), the products of an array of the sizes.
import numpy as np


def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1, bytes_per_float=4):
    pairs = np.prod(np.array([batch_size, num_heads, seq_len_q, seq_len_k], dtype=np.int64))
    d_k = np.int64(d_model // num_heads)
    return {
        "score_flops": 2 * pairs * d_k,
        "mix_flops": 2 * pairs * d_k,
        "weights_bytes": pairs * np.int64(bytes_per_float),
    }
