# function: create_qkv
# caught-by: test_query_projection, test_key_projection
# misconception: roles_swapped
# Mixes up the roles: queries projected with W_k and keys with W_q.
def create_qkv(X, W_q, W_k, W_v):
    return X @ W_k, X @ W_q, X @ W_v
