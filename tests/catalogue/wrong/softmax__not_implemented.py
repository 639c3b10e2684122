# function: softmax
# caught-by: test_rows_are_distributions, test_honours_axis, test_batched_input, test_large_inputs_do_not_overflow, test_rows_on_different_scales, test_all_masked_row_gives_zeros, test_input_is_not_modified
# misconception: not_implemented
# The untouched stub of the released notebook: it raises NotImplementedError.
def softmax(z, axis=-1):
    raise NotImplementedError()
