# function: create_qkv
# caught-by: test_value_projection_may_be_narrower
# misconception: values_from_wrong_matrix
# Copy-paste slip: the values are projected with W_k (assumes d_v == d_k).
def create_qkv(X, W_q, W_k, W_v):
    return X @ W_q, X @ W_k, X @ W_k
