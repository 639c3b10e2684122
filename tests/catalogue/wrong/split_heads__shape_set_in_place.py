# function: split_heads
# caught-by: test_input_not_modified
# misconception: in_place
# Reshapes by setting X.shape: that reshapes the caller's array too.
def split_heads(X, num_heads):
    *lead, seq_len, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by num_heads")
    X.shape = (*lead, seq_len, num_heads, d_model // num_heads)
    return np.swapaxes(X, -2, -3)
