# function: softmax
# caught-by: test_rows_are_distributions, test_honours_axis, test_batched_input, test_large_inputs_do_not_overflow, test_rows_on_different_scales, test_all_masked_row_gives_zeros
# caller-keeps-points: scaled_dot_product_attention, fails only test_same_with_your_other_functions
# misconception: lower_precision
# Computes in float16 (every weight off by about 1e-3 of itself, slightly, not far): the reference's scaled_dot_product_attention calls it, and the mistake costs points in softmax only, at the graders' tolerance.
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float16)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(z - m)
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1)
