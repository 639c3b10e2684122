"""Grader for causal_mask(seq_len): 5 points."""

import numpy as np

from attention_course.grading.harness import Fail, cases, expect_array, expect_shape, over, points

from . import reference as ref

FN = "causal_mask"


@cases
def inputs(draw):
    """Sequence lengths from 1 to well past any mask a student might precompute."""
    return {
        "sizes": [
            draw.case(FN, 1, what="seq_len=1"),
            *draw(FN, 5),
            *draw(FN, 2, large=("n",)),
        ],
    }


def pattern(student, case) -> np.ndarray:
    """Where the student's (n, n) mask is set, whatever its dtype (the dtype has its own test)."""
    n = case.args[0]
    got = expect_shape(student.value(case), (n, n), f"causal_mask({n})")
    if not (got.dtype == bool or np.issubdtype(got.dtype, np.number)):
        raise Fail(f"causal_mask({n}): expected a bool array, got dtype {got.dtype}")
    return got != 0


def require_pattern(student, case, what: str) -> None:
    """Shape and dtype points count only for a mask that is also the causal pattern."""
    n = case.args[0]
    if not np.array_equal(pattern(student, case), ref.causal_mask(n)):
        raise Fail(f"causal_mask({n}): {what}, but it is not the causal pattern")


@points(1)
@over("sizes")
def test_returns_bool_array(case, student):
    """the mask is a numpy array of dtype bool (and the causal pattern)"""
    n = case.args[0]
    got = expect_array(student.value(case), f"causal_mask({n})", float_dtype=False)
    if got.dtype != bool:
        raise Fail(f"causal_mask({n}): dtype {got.dtype}, where a mask is a bool array")
    require_pattern(student, case, "the dtype is bool")


@points(1)
@over("sizes")
def test_shape_for_several_sizes(case, student):
    """causal_mask(n) has shape (n, n) for n from 1 to over 1000 (and the causal pattern)"""
    n = case.args[0]
    require_pattern(student, case, f"the shape is ({n}, {n})")


@points(1)
@over("sizes")
def test_future_is_forbidden(case, student):
    """entries strictly above the diagonal (future tokens) are True"""
    n = case.args[0]
    got, want = pattern(student, case), ref.causal_mask(n)
    if not np.array_equal(got[want], want[want]):
        raise Fail(f"causal_mask({n}): some future positions (j > i) are not forbidden (True)")


@points(1)
@over("sizes")
def test_token_sees_itself_and_past(case, student):
    """the diagonal and the past are False, while the future is True"""
    n = case.args[0]
    got, want = pattern(student, case), ref.causal_mask(n)
    if not got[want].all():
        raise Fail(
            f"causal_mask({n}): some of the future is allowed: a mask that forbids nothing "
            "does not make attention causal"
        )
    if got[~want].any():
        raise Fail(f"causal_mask({n}): the diagonal or the past (j <= i) is forbidden")


@points(1)
@over("sizes")
def test_matches_causal_pattern(case, student):
    """the whole mask is the causal pattern (n = 1 forbids nothing)"""
    n = case.args[0]
    if not np.array_equal(pattern(student, case), ref.causal_mask(n)):
        raise Fail(f"causal_mask({n}) is not the causal pattern")
