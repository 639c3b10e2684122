"""What every grader file uses: declaring calls, reading the student's results, failing clearly.

A grader file declares, at import time, the calls it needs (`call(...)`); the session runs them
all at once in one worker process (see conftest.py), and each test reads the outcome of its
calls through the `student` fixture. Failure messages name the property and the likely
misconception; they never show expected values or grader code.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from attention_course.sandbox import Call, Outcome

points = pytest.mark.points

RTOL = 1e-6
ATOL = 1e-9

REGISTRY: dict[str, Call] = {}
_counter = itertools.count()


class Fail(AssertionError):
    """A failed property, with the message the student sees."""


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def call(
    function: str, *args: Any, readonly: bool = False, errstate: bool = False, **kwargs: Any
) -> Call:
    """Declare a call of the student's `function`; its outcome is read in a test."""
    key = f"{function}#{next(_counter)}"
    c = Call(key, function, tuple(args), dict(kwargs), readonly=readonly, errstate=errstate)
    REGISTRY[key] = c
    return c


class Student:
    """The outcomes of every declared call for one submission."""

    def __init__(self, outcomes: dict[str, Outcome]):
        self.outcomes = outcomes

    def outcome(self, c: Call) -> Outcome:
        return self.outcomes[c.key]

    def value(self, c: Call) -> Any:
        """The return value of `c`, or a Fail saying why there is none."""
        out = self.outcome(c)
        if out.status != "ok":
            raise Fail(f"{c.function} {out.describe()}")
        return out.value

    def pair(self, c: Call) -> tuple[np.ndarray, np.ndarray]:
        """A function that must return `(output, weights)`."""
        got = self.value(c)
        if not isinstance(got, tuple) or len(got) != 2:
            raise Fail(f"{c.function} must return a tuple (output, weights), got {_kind(got)}")
        return got


def _kind(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape}"
    if isinstance(x, tuple):
        return f"a tuple of {len(x)} items"
    return f"a {type(x).__name__}"


def expect_array(got: Any, what: str, float_dtype: bool = True) -> np.ndarray:
    if not isinstance(got, np.ndarray):
        raise Fail(f"{what}: expected a numpy array, got {_kind(got)}")
    if float_dtype and not np.issubdtype(got.dtype, np.floating):
        raise Fail(f"{what}: expected a float array, got dtype {got.dtype}")
    return got


def expect_shape(got: Any, shape: tuple, what: str, hint: str = "") -> np.ndarray:
    got = expect_array(got, what, float_dtype=False)
    if got.shape != tuple(shape):
        raise Fail(f"{what}: shape {got.shape}, expected {tuple(shape)}. {hint}".rstrip())
    return got


def expect_close(
    got: Any, want: np.ndarray, what: str, hint: str = "", rtol: float = RTOL, atol: float = ATOL
) -> None:
    """Shape first, then float dtype, then values (NaN never equals NaN)."""
    want = np.asarray(want)
    expect_shape(got, want.shape, what, hint)
    expect_array(got, what, float_dtype=np.issubdtype(want.dtype, np.floating))
    if np.isnan(got.astype(np.float64, copy=False)).any():
        raise Fail(f"{what}: contains NaN. {hint}".rstrip())
    if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=False):
        raise Fail(f"{what}: values are not the expected ones. {hint}".rstrip())


def expect_equal(got: Any, want: np.ndarray, what: str, hint: str = "") -> None:
    """Exact equality, for masks and exact zeros."""
    want = np.asarray(want)
    expect_shape(got, want.shape, what, hint)
    if got.dtype != want.dtype:
        raise Fail(f"{what}: dtype {got.dtype}, expected {want.dtype}. {hint}".rstrip())
    if not np.array_equal(got, want):
        raise Fail(f"{what}: values are not the expected ones. {hint}".rstrip())


def expect_unmodified(student: Student, c: Call, hint: str = "") -> None:
    """The arrays passed in are unchanged after the call."""
    out = student.outcome(c)
    if out.status != "ok":
        raise Fail(f"{c.function} {out.describe()}")
    inputs = [a for a in list(c.args) + list(c.kwargs.values()) if isinstance(a, np.ndarray)]
    if len(out.inputs_after) != len(inputs):
        raise Fail(f"{c.function}: its inputs could not be checked after the call")
    for before, after in zip(inputs, out.inputs_after, strict=True):
        if (
            not isinstance(after, np.ndarray)
            or after.shape != before.shape
            or not (np.array_equal(after, before, equal_nan=True))
        ):
            raise Fail(f"{c.function} modified an input array in place. {hint}".rstrip())


def expect_no_warnings(student: Student, c: Call, hint: str = "") -> None:
    """No numeric RuntimeWarning (overflow, invalid value, divide by zero) during the call.

    Other warnings a student's code emits on purpose are not the numerics' fault and cost
    nothing."""
    out = student.outcome(c)
    numeric = [w for w in out.warnings if w.startswith("RuntimeWarning")]
    if numeric:
        raise Fail(f"{c.function} emitted a warning ({numeric[0]}). {hint}".rstrip())
