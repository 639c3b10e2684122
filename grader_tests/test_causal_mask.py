"""Grader for causal_mask(seq_len): 5 points."""

import numpy as np

from attention_course.grading.harness import Fail, call, expect_array, expect_shape, points

from . import reference as ref

SIZES = (1, 2, 5, 8)
CALLS = {n: call("causal_mask", n) for n in SIZES}

HINT = (
    "True means FORBIDDEN: token i may see tokens 0..i, so the mask is True strictly above "
    "the diagonal (np.triu(np.ones((n, n)), k=1).astype(bool))."
)


def pattern(student, n: int) -> np.ndarray:
    """Where the student's (n, n) mask is set, whatever its dtype (the dtype has its own test)."""
    got = expect_shape(
        student.value(CALLS[n]),
        (n, n),
        f"causal_mask({n})",
        "The mask of a sequence of n tokens is (n, n).",
    )
    if not (got.dtype == bool or np.issubdtype(got.dtype, np.number)):
        raise Fail(f"causal_mask({n}): expected a bool array, got dtype {got.dtype}")
    return got != 0


def require_pattern(student, n: int, what: str) -> None:
    """Shape and dtype points count only for a mask that is also the causal pattern."""
    if not np.array_equal(pattern(student, n), ref.causal_mask(n)):
        raise Fail(f"causal_mask({n}): {what}, but it is not the causal pattern. " + HINT)


@points(1)
def test_returns_bool_array(student):
    """the mask is a numpy array of dtype bool (and the causal pattern)"""
    for n in SIZES:
        got = expect_array(student.value(CALLS[n]), f"causal_mask({n})", float_dtype=False)
        if got.dtype == bool:
            require_pattern(student, n, "the dtype is bool")
        else:
            raise Fail(
                f"causal_mask({n}): dtype {got.dtype}, expected bool. A mask of 0/1 "
                "numbers is not a boolean mask (~mask and np.where misbehave): convert "
                "with .astype(bool)."
            )


@points(1)
def test_shape_for_several_sizes(student):
    """causal_mask(n) has shape (n, n) for n = 1, 2, 5, 8 (and the causal pattern)"""
    for n in SIZES:
        require_pattern(student, n, f"the shape is ({n}, {n})")


@points(1)
def test_future_is_forbidden(student):
    """entries strictly above the diagonal (future tokens) are True, for n = 1, 2, 5, 8"""
    for n in SIZES:
        got, want = pattern(student, n), ref.causal_mask(n)
        if not np.array_equal(got[want], want[want]):
            raise Fail(
                f"causal_mask({n}): some future positions (j > i) are not forbidden. "
                + HINT
                + " np.tril keeps the lower triangle, the opposite."
            )


@points(1)
def test_token_sees_itself_and_past(student):
    """the diagonal and the past are False, while the future is True"""
    for n in SIZES:
        got, want = pattern(student, n), ref.causal_mask(n)
        if not got[want].all():
            raise Fail(
                f"causal_mask({n}): the past is allowed, but so is some of the future: a mask "
                "that forbids nothing does not make attention causal. " + HINT
            )
        if got[~want].any():
            raise Fail(
                f"causal_mask({n}): the diagonal or the past (j <= i) is forbidden. "
                + HINT
                + " With k=0 a token cannot even see itself."
            )


@points(1)
def test_matches_causal_pattern(student):
    """the whole mask is the causal pattern for n = 1, 2, 5, 8 (1 forbids nothing)"""
    for n in SIZES:
        if not np.array_equal(pattern(student, n), ref.causal_mask(n)):
            raise Fail(f"causal_mask({n}) is not the causal pattern. " + HINT)
