# function: create_qkv
# caught-by: test_value_projection_may_be_narrower
# misconception: values_from_wrong_matrix
# Projects the values with W_q: the right shape only when W_v is as wide as W_q.
def create_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_q
