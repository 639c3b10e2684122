# function: softmax
# caught-by: test_rows_are_distributions, test_honours_axis, test_batched_input, test_large_inputs_do_not_overflow, test_rows_on_different_scales, test_all_masked_row_gives_zeros
# misconception: probability_floor
# Mixes in a floor of 1e-5 / n "so that no weight is exactly 0": weights that must be 0 are not.
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float64)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(z - m)
    total = np.sum(e, axis=axis, keepdims=True)
    p = e / np.where(total > 0, total, 1.0)
    return (1 - 1e-5) * p + 1e-5 / z.shape[axis]
