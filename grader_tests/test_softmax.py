"""Grader for softmax(z, axis=-1): 10 points."""

import numpy as np

from attention_course.grading.draws import writable
from attention_course.grading.harness import (
    cases,
    expect_close,
    expect_no_warnings,
    expect_unmodified,
    over,
    points,
)

from . import reference as ref

FN = "softmax"


@cases
def inputs(draw):
    """Scores of every rank the contract allows, along any axis, on each edge it names. The rank
    and the axis have tests of their own (rows, axis, batched); the edges are judged on rows
    (2-D scores), so that a mistake of one kind costs its own test."""
    rows = (1,)
    return {
        # 1-D and 2-D scores, float and integer, one very long row
        "rows": [
            *draw(FN, 6, ranks=(0, 1)),
            *draw(FN, 2, ranks=(0, 1), dtypes={"z": "int64"}),
            *draw(FN, 1, ranks=(0,), large=("n",)),
        ],
        "axis": draw(FN, 8, given=("axis",), ranks=(0, 1, 2)),
        "batched": draw(FN, 4, ranks=(2,)),
        "large": [
            draw.case(
                FN,
                np.array([[1000.0, 1001.0], [-1000.0, -1001.0]]),
                errstate=True,
                what="z = [[1000, 1001], [-1000, -1001]]",
            ),
            *draw(FN, 8, ranks=rows, edges={"z": "large"}, errstate=True),
        ],
        "scales": [
            *draw(FN, 3, ranks=rows, edges={"z": "spread"}),
            *draw(FN, 3, ranks=rows, edges={"z": "fine"}),
        ],
        "neg_inf": [
            draw.case(
                FN,
                np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0]]),
                what="z = [[-inf, -inf, -inf], [0, -inf, 1]]",
            ),
            *draw(FN, 4, ranks=rows, edges={"z": "neg_inf"}),
            # slices of -inf along any axis, not only the last
            *draw(FN, 4, given=("axis",), ranks=(1, 2), edges={"z": "neg_inf"}),
        ],
        "readonly": draw(FN, 3, ranks=rows, readonly=True, related={"writable": writable}),
    }


def expect_softmax(case, got, rtol=1e-6):
    axis = case.arg("axis", -1)
    expect_close(
        got, ref.softmax(*case.args, **case.kwargs), f"softmax along axis {axis}", rtol=rtol
    )


@points(2)
@over("rows")
def test_rows_are_distributions(case, got):
    """each row of 1-D and 2-D scores, float or integer, becomes a probability distribution"""
    expect_softmax(case, got)


@points(2)
@over("axis")
def test_honours_axis(case, got):
    """the axis argument is honoured, for every axis of 1-D to 3-D scores, negative or not"""
    expect_softmax(case, got)


@points(1)
@over("batched")
def test_batched_input(case, got):
    """scores with two leading batch axes: every slice along the last axis is normalised"""
    expect_softmax(case, got)


@points(2)
@over("large")
def test_large_inputs_do_not_overflow(case, got, student):
    """scores near +1000 or -1000 give the right weights with numpy's overflow raising errors,
    and no warning"""
    # Compared at 1e-3: an overflow or an underflow is off by far more, and whether the
    # arithmetic is float64 is test_rows_on_different_scales's question, not this one's.
    expect_softmax(case, got, rtol=1e-3)
    expect_no_warnings(student, case)


@points(1)
@over("scales")
def test_rows_on_different_scales(case, got, student):
    """slices near 1000, near 0 and near -900 are each normalised, and scores far from 0 that
    differ by less than 0.001 keep their differences (float64 inside)"""
    expect_softmax(case, got)
    expect_no_warnings(student, case)


@points(1)
@over("neg_inf")
def test_all_masked_row_gives_zeros(case, got, student):
    """-inf scores get weight 0, and a slice of only -inf (along any axis) gives all zeros,
    without NaN or a warning"""
    expect_softmax(case, got)
    expect_no_warnings(student, case)


@points(1)
@over("readonly")
def test_input_is_not_modified(case, student):
    """the input array is left unchanged: a read-only input gives what a writable one gives"""
    twin = case.related["writable"]
    expect_unmodified(student, case, like=twin)
    expect_close(
        student.value(case),
        student.value(twin),
        "softmax of read-only scores, against writable ones",
    )
