"""Grader for softmax(z, axis=-1): 10 points."""

import numpy as np

from attention_course.grading.harness import (
    call,
    expect_close,
    expect_no_warnings,
    expect_unmodified,
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
ROW_UP = call("softmax", np.array([1000.0, 1001.0]), errstate=True)  # LARGE's rows, one at a time
ROW_DOWN = call("softmax", np.array([-1000.0, -1001.0]), errstate=True)
LARGE_3D = call("softmax", r.normal(size=(2, 3, 5)) * 800, errstate=True)
SCALES = call(
    "softmax", np.array([[1000.0, 999.0, 998.0], [1.0, 2.0, 3.0], [-900.0, -901.0, -899.0]])
)
ALL_INF = call("softmax", np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0]]))
READONLY = call("softmax", r.normal(size=(4, 6)), readonly=True)

HINT_AXIS = "Is the sum taken over the last axis, with keepdims=True, so each row sums to 1?"
HINT_SHIFT = "Subtract the maximum of each slice (keepdims=True) before np.exp."


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


def _right(student, c) -> bool:
    out = student.outcome(c)
    want = ref.softmax(*c.args)
    got = out.value
    return (
        out.status == "ok"
        and isinstance(got, np.ndarray)
        and got.shape == want.shape
        and not np.isnan(got.astype(float)).any()
        and bool(np.allclose(got, want))
    )


def _large_hint(student) -> str:
    """What went wrong with scores of magnitude 1000: overflow, underflow, or the shift of the
    whole array (each row alone works, a row far below the array's maximum underflows)."""
    if not _right(student, ROW_UP):
        return "np.exp(1000) overflows. " + HINT_SHIFT
    if not _right(student, ROW_DOWN):
        return "np.exp(-1000) underflows to 0, and 0 / 0 is NaN. " + HINT_SHIFT
    return (
        "Each row works on its own, but next to a row near 1000 the row near -1000 underflows "
        "to 0 / 0: shift each row by its own maximum (keepdims=True), not by the maximum of "
        "the whole array."
    )


@points(2)
def test_large_inputs_do_not_overflow(student):
    """[1000, 1001] and [-1000, -1001] work with overflow raising errors, and no warnings"""
    for c, what in (
        (LARGE, "softmax of [[1000, 1001], [-1000, -1001]]"),
        (LARGE_3D, "softmax of scores of magnitude ~1000"),
    ):
        hint = _large_hint(student)
        with hinting(hint):
            expect_close(student.value(c), ref.softmax(*c.args), what, hint)
        expect_no_warnings(student, c, HINT_SHIFT)


@points(1)
def test_rows_on_different_scales(student):
    """rows of very different magnitudes are each normalised correctly"""
    expect_close(
        student.value(SCALES),
        ref.softmax(*SCALES.args),
        "softmax of rows near 1000, near 0 and near -900",
        "Shift each row by its own maximum, not by the maximum of the whole array.",
    )
    expect_no_warnings(student, SCALES, HINT_SHIFT)


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
