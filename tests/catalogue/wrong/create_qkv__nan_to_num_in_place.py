# function: create_qkv
# caught-by: test_inputs_not_modified
# misconception: in_place
# Cleans NaN out of X in place (np.nan_to_num(X, copy=False)): it writes into the caller's array, and a read-only X raises.
def create_qkv(X, W_q, W_k, W_v):
    np.nan_to_num(X, copy=False)
    return X @ W_q, X @ W_k, X @ W_v
