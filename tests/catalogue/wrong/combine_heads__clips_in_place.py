# function: combine_heads
# caught-by: test_input_not_modified
# misconception: in_place
# Clips H in place against overflow (np.clip(H, ..., out=H)): it writes into the caller's array, and a read-only H raises.
def combine_heads(H):
    np.clip(H, -1e6, 1e6, out=H)
    *lead, num_heads, seq_len, d_k = H.shape
    return np.swapaxes(H, -2, -3).reshape(*lead, seq_len, num_heads * d_k)
