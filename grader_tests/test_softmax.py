"""Grader for softmax(z, axis=-1): 10 points."""

import numpy as np

from attention_course.grading.harness import (
    RTOL,
    call,
    expect_close,
    expect_no_warnings,
    expect_unmodified,
    explain_shape_errors,
    hinting,
    points,
    rng,
)

from . import reference as ref

r = rng(101)
ROWS = call("softmax", r.normal(size=(5, 7)))
ROWS_AXIS0 = call("softmax", r.normal(size=(5, 7)), axis=0)
BATCH_AXIS1 = call("softmax", r.normal(size=(2, 3, 4)), axis=1)
BATCH = call("softmax", r.normal(size=(3, 4, 6)) * 3)
LARGE = call("softmax", np.array([[1000.0, 1001.0], [-1000.0, -1001.0]]), errstate=True)
LARGE_3D = call("softmax", r.normal(size=(2, 3, 5)) * 800, errstate=True)
SCALES = call(
    "softmax", np.array([[1000.0, 999.0, 998.0], [1.0, 2.0, 3.0], [-900.0, -901.0, -899.0]])
)
ALL_INF = call("softmax", np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0]]))
READONLY = call("softmax", r.normal(size=(4, 6)), readonly=True)
# Ordinary scores of one dimension: with BATCH (3-D) and ROWS (2-D), they tell a softmax that is
# wrong for inputs of some rank from one that fails on large scores only.
ROW = call("softmax", np.linspace(-1.0, 2.0, 7))
# Scores far from 0 that differ by less than float32 (or float16) can tell apart there: float64
# keeps the differences, a lower precision inside the function rounds them away.
FINE = call(
    "softmax",
    np.array([[1e4, 1e4 + 5e-4, 1e4 - 5e-4, 1e4 + 1e-3], [-3e3, -3e3 + 2e-4, -3e3 - 3e-4, -3e3]]),
)
HINT_FLOAT64 = (
    "float64 inputs are computed in float64 (exercise contract: Conventions, float64): scores "
    "near 10000 that differ by 0.0005 are rounded together in float32 or float16, even when "
    "the result is cast back."
)

HINT_AXIS = "Is the sum taken over the last axis, with keepdims=True, so each row sums to 1?"
HINT_SHIFT = (
    "A stable softmax shifts each slice so that no exponent is above 0 and the largest is "
    "exactly 0 (exercise contract, softmax: no overflow and no warning)."
)
HINT_OVERFLOW = (
    "np.exp overflowed: after the shift some exponents are still large and positive. A shift "
    "by anything below a slice's own maximum (its minimum, say, or nothing) leaves them so. "
    + HINT_SHIFT
)
HINT_UNDERFLOW = (
    "Every exponential of some slice underflowed to 0, and 0 / 0 is NaN: those scores lie far "
    "below the value they were shifted by, as when a slice is shifted by the maximum of the "
    "whole array instead of by its own maximum. " + HINT_SHIFT
)
HINT_RANK = (
    "This softmax is already wrong for ordinary scores of this number of dimensions, so the "
    "large values are not the problem: does it assume a 2-D input (a fixed axis number or "
    "indexing for rows)? It must work along the last axis for any number of dimensions "
    "(exercise contract, Conventions: Batches)."
)


@points(2)
def test_rows_are_distributions(student):
    """softmax of a (5, 7) matrix: each row a probability distribution"""
    expect_close(
        student.value(ROWS), ref.softmax(*ROWS.args), "softmax of a (5, 7) matrix", HINT_AXIS
    )


@points(2)
def test_honours_axis(student):
    """the axis argument is honoured (axis=0 of a matrix, axis=1 of a batch)"""
    hint = "The normalisation must run along `axis`, not always along the last axis."
    expect_close(
        student.value(ROWS_AXIS0),
        ref.softmax(*ROWS_AXIS0.args, axis=0),
        "softmax(z, axis=0) of a (5, 7) matrix",
        hint,
    )
    expect_close(
        student.value(BATCH_AXIS1),
        ref.softmax(*BATCH_AXIS1.args, axis=1),
        "softmax(z, axis=1) of a (2, 3, 4) array",
        hint,
    )


@points(1)
def test_batched_input(student):
    """a (3, 4, 6) batch: every slice along the last axis is normalised"""
    expect_close(
        student.value(BATCH), ref.softmax(*BATCH.args), "softmax of a (3, 4, 6) batch", HINT_AXIS
    )


explain_shape_errors(
    "softmax",
    lambda c, shapes: (
        "softmax normalises along `axis` of an input with any number of dimensions, "
        "one dimension included (exercise contract: Conventions, Batches)."
    ),
)


def _right(student, c) -> bool:
    out = student.outcome(c)
    want = ref.softmax(*c.args, **c.kwargs)
    got = out.value
    return (
        out.status == "ok"
        and isinstance(got, np.ndarray)
        and got.shape == want.shape
        and not np.isnan(got.astype(float)).any()
        and bool(np.allclose(got, want))
    )


ORDINARY = {1: ROW, 2: ROWS, 3: BATCH}  # ordinary scores of each rank


def _large_hint(student, c) -> str:
    """The misconception the call with large scores `c` shows, from what the code did: wrong
    already for ordinary scores of that rank, an overflow, or an underflow to 0 / 0."""
    if not _right(student, ORDINARY[np.ndim(c.args[0])]):
        return HINT_RANK
    out = student.outcome(c)
    if out.status == "error":
        if "overflow" in out.error_message:
            return HINT_OVERFLOW
        if "invalid" in out.error_message or "divide" in out.error_message:
            return HINT_UNDERFLOW
        return HINT_SHIFT
    got = out.value
    if isinstance(got, np.ndarray) and np.issubdtype(got.dtype, np.number):
        if np.isinf(got).any():
            return HINT_OVERFLOW
        if np.isnan(got.astype(np.float64)).any():
            return HINT_UNDERFLOW
    return HINT_SHIFT


@points(2)
def test_large_inputs_do_not_overflow(student):
    """[1000, 1001] and [-1000, -1001] work with overflow raising errors, and no warnings"""
    # LARGE is exact; LARGE_3D's random rows are compared at 1e-3: an overflow or underflow
    # gives inf, NaN or weights off by far more, and whether the arithmetic is float64 is
    # test_rows_on_different_scales's question, not this one's (on random rows near 1000 a
    # float32 result is off by up to 1e-4, or not, as the draw has near ties or not).
    for c, what, rtol in (
        (LARGE, "softmax of [[1000, 1001], [-1000, -1001]]", RTOL),
        (LARGE_3D, "softmax of scores of magnitude ~1000", 1e-3),
    ):
        hint = _large_hint(student, c)
        with hinting(hint):
            expect_close(student.value(c), ref.softmax(*c.args), what, hint, rtol=rtol)
        expect_no_warnings(student, c, HINT_SHIFT)


@points(1)
def test_rows_on_different_scales(student):
    """rows of very different magnitudes are each normalised correctly, in float64"""
    expect_close(
        student.value(SCALES),
        ref.softmax(*SCALES.args),
        "softmax of rows near 1000, near 0 and near -900",
        "Shift each row by its own maximum, not by the maximum of the whole array.",
    )
    expect_no_warnings(student, SCALES, HINT_SHIFT)
    expect_close(
        student.value(FINE),
        ref.softmax(*FINE.args),
        "softmax of rows near 10000 and near -3000 whose scores differ by less than 0.001",
        HINT_FLOAT64,
    )


@points(1)
def test_all_masked_row_gives_zeros(student):
    """a row of only -inf gives all zeros, without NaN or a warning"""
    hint = (
        "A fully masked row (all -inf) must give weights of 0: its max is -inf, so shift by "
        "0 there and avoid dividing 0 by 0."
    )
    expect_close(
        student.value(ALL_INF),
        ref.softmax(*ALL_INF.args),
        "softmax of [[-inf, -inf, -inf], [0, -inf, 1]]",
        hint,
    )
    expect_no_warnings(student, ALL_INF, hint)


@points(1)
def test_input_is_not_modified(student):
    """the input array is left unchanged, and a read-only input works"""
    hint = "Build new arrays (z - m), do not update z in place (z -= m)."
    expect_unmodified(student, READONLY, hint, like=ROWS)
    expect_close(
        student.value(READONLY), ref.softmax(*READONLY.args), "softmax of a read-only array", hint
    )
