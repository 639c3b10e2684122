# function: combine_heads
# caught-by: test_shape, test_inverse_of_split_heads, test_heads_in_order
# misconception: rows_from_heads
# Reshapes to (num_heads, -1): the rows counted from the heads instead of the tokens.
def combine_heads(H):
    num_heads = H.shape[-3]
    X = np.swapaxes(H, -2, -3)
    return X.reshape(*H.shape[:-3], num_heads, -1)
