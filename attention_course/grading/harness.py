"""What every grader file uses: its cases, its properties, reading the student's results,
failing clearly.

A grader file declares its inputs with one `@cases` function of the seeded random source the
engine gives it for each submission (draws.py): named families of cases drawn over the exercise
contract, beside cases written by hand. Each test is a property with its points, checked on every
case of the families it names:

    @cases
    def inputs(draw):
        return {"plain": draw(FN, 6), "masked": draw(FN, 13, given=("mask",))}

    @points(2)
    @over("plain", "masked")
    def test_values_match_reference(case, got):
        # (its docstring: the property, as the feedback names it)
        expect_pair_close(got, ref.scaled_dot_product_attention(*case.args, **case.kwargs))

A property test may take `case` (the Case), `got` (the student's value for it: a Fail saying why
when the call gave none), `outcome` (the call's raw Outcome) and `student` (for the case's
related calls). The engine (session.py) runs every call of a submission at once in the sandbox,
checks each property on every case, shrinks a failing draw to a small counterexample, names the
misconception that explains it (diagnosis.py), and says a failure that follows from another once.
Failure messages state the property; they never show expected values or grader code.

Besides the basic checks (`expect_close`, `expect_shape`, ...), the checks several graders share
live here: reading a result against the reference's shape or rank (`ArrayReader`, and
`PairReader` for functions returning (output, weights)), a batch against its slices
(`expect_batch_slice`), read-only inputs against writable ones (`expect_readonly_twin`).

Where this stands on a submission's way (docs/life-of-a-submission.md): what the graders a
Session runs are written with: a grader file's `@cases` function receives the submission's
seeded source (draws.py) as its parameter; each property test is called by the Session
(verdicts.py) with each case and the student's outcome of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from attention_course.sandbox.program import Call, Outcome

POINTS = "__grading_points__"  # the attribute `points` gives a grader test
_Test = TypeVar("_Test", bound=Callable[..., Any])


def points(n: float) -> Callable[[_Test], _Test]:
    """`@points(n)`: what a grader test is worth. A plain attribute, read by the runner and by
    the pytest plugin alike (`points_of`), so that grading without pytest never imports it."""

    def worth(fn: _Test) -> _Test:
        setattr(fn, POINTS, float(n))
        return fn

    return worth


def points_of(fn: Callable[..., Any] | None) -> float:
    """A grader test's points: `@points(n)`, or a pytest `points` marker on the function
    (graders written for pytest alone); LookupError when it has neither."""
    if hasattr(fn, POINTS):
        return float(getattr(fn, POINTS))
    for mark in getattr(fn, "pytestmark", []):
        if getattr(mark, "name", None) == "points":
            return float(mark.args[0])
    name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__name__', fn)}"
    raise LookupError(f"{name} has no points marker")


RTOL = 1e-6
ATOL = 1e-9
# Relations between a function's own results (a batch and its slices, read-only and writable
# inputs, masked and unmasked weights): their structure, not their precision, which the tests
# against the reference judge at RTOL.
RELATION_RTOL = 1e-4
RELATION_ATOL = 1e-7


class Fail(AssertionError):
    """A failed property, with the message the student sees.

    A `final` failure says all there is to say (a function not implemented yet): `hinting`
    adds no advice to it. A failure `of_call` is the call's own (it raised, ran too long, or
    returned no value of the kind asked for), not the property's: another test that meets
    the same failure follows from the first. `cases` names the cases it failed on, for a
    test that reads outcomes itself."""

    final = False

    def __init__(
        self,
        message: str = "",
        *,
        of_call: bool = False,
        cases: tuple = (),
        outcome: Outcome | None = None,
    ):
        super().__init__(message)
        self.of_call = of_call
        self.cases = cases
        self.outcome = outcome  # the call's outcome, for a failure of the call


NOT_IMPLEMENTED = "is not implemented yet"  # what a function still raising the stub's error says


class NotImplementedYet(Fail):
    """The function still raises NotImplementedError: nothing else is worth saying."""

    final = True


CASES = "__grading_cases__"  # marks a grader file's `@cases` function
OVER = "__grading_over__"  # the case families a property test is checked on


def cases(fn: Callable[..., dict]) -> Callable[..., dict]:
    """`@cases`: the grader file's inputs, `fn(draw) -> {family: [Case, ...]}`, made for each
    submission with its seeded source (`draw`, draws.py). One per file."""
    setattr(fn, CASES, True)
    return fn


def over(*families: str) -> Callable[[_Test], _Test]:
    """`@over("plain", ...)`: a property test, checked on every case of these families."""

    def checked_on(fn: _Test) -> _Test:
        setattr(fn, OVER, tuple(families))
        return fn

    return checked_on


def _call_of(c: Any) -> Call:
    """The Call of a Case (draws.py), or the Call itself."""
    return c if isinstance(c, Call) else c.call


class Student:
    """The outcomes of every call of one submission's program run."""

    def __init__(self, outcomes: dict[str, Outcome]):
        self.outcomes = outcomes

    def outcome(self, c: Any) -> Outcome:
        return self.outcomes[_call_of(c).key]

    def value(self, c: Any) -> Any:
        """The return value of `c` (a Case or a Call), or a Fail of the call saying why there is
        none: "not implemented yet" for a stub, the property a shape mismatch breaks for
        numpy's shape errors."""
        c = _call_of(c)
        out = self.outcome(c)
        if out.status == "error" and out.error_type == "NotImplementedError":
            raise NotImplementedYet(f"{c.function} {NOT_IMPLEMENTED}", of_call=True, outcome=out)
        if out.status == "error" and (mismatch := shape_mismatch(out)):
            raise Fail(shape_failure(c, mismatch), of_call=True, outcome=out)
        if out.status == "error" and (said := misleading(out)):
            raise Fail(f"{c.function} raised {out.error_type}: {said}", of_call=True, outcome=out)
        if out.status != "ok":
            raise Fail(f"{c.function} {out.describe()}", of_call=True, outcome=out)
        return out.value

    def pair(self, c: Any) -> tuple[np.ndarray, np.ndarray]:
        """A function that must return `(output, weights)` (a list of the two is accepted)."""
        got = self.value(c)
        return as_pair(got, _call_of(c).function, self.outcome(c))


def as_pair(
    got: Any, function: str, outcome: Outcome | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """`got` as (output, weights): a tuple or list of two, else a Fail of the call."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise Fail(
            f"{function} must return a tuple (output, weights), got {_kind(got)}",
            of_call=True,
            outcome=outcome,
        )
    return got[0], got[1]


@contextmanager
def hinting(hint: str) -> Iterator[None]:
    """Add `hint` to a failure inside whose message does not already contain it.

    For tests whose advice also fits failures the checks inside word on their own: the call
    itself raising ("raised ValueError: ..."), a result of the wrong type or rank. A final
    failure ("not implemented yet") gets no hint."""
    try:
        yield
    except Fail as exc:
        if exc.final or hint in str(exc):
            raise
        said = str(exc).rstrip()
        raise Fail(f"{said}{'' if said.endswith(('.', '?', '!')) else '.'} {hint}") from None


# numpy's words for arrays whose shapes do not fit together, and what each means in a sentence.
_SHAPE_ERRORS = (
    ("could not be broadcast together", "two of its arrays have shapes that do not broadcast"),
    ("mismatch in its core dimension", "a matrix product's inner sizes differ"),
    ("not aligned", "a matrix product's inner sizes differ"),
    ("cannot reshape array", "a reshape asks for a shape of another size"),
    ("boolean index did not match", "a boolean index has another shape than the array"),
    ("out of bounds for array of dimension", "it uses an axis its input does not have"),
    ("axes don't match array", "a transpose names other axes than its input has"),
    ("shape mismatch", "two of its arrays have shapes that do not fit together"),
)
_SHAPE = re.compile(r"\((?:\d+,?\s*)*\)")

# numpy's words whose advice would mislead a student here, and what they mean instead.
_MISLEADING = (
    (
        "truth value of an array with more than one element is ambiguous",
        "an array was used where one True or False is needed (an `if` on an array, or `and` / "
        "`or` between arrays)",
    ),
)


def misleading(out: Outcome) -> str | None:
    """A sentence for an error whose own words give the wrong advice (numpy's "use a.any() or
    a.all()" for an `if mask:`), or None."""
    return next((said for words, said in _MISLEADING if words in out.error_message), None)


# Per graded function: the property a shape mismatch breaks, as a sentence for the student,
# from the call and the shapes numpy names. Registered by the function's grader.
ShapeExplainer = Callable[[Call, list[tuple[int, ...]]], str]
SHAPE_PROPERTIES: dict[str, ShapeExplainer] = {}

SHAPE_CONTRACT = (
    "Every array inside the function must have the shape the exercise contract gives it for "
    "these inputs (docs/exercise-contract.md, Conventions)."
)


def explain_shape_errors(function: str, explain: ShapeExplainer) -> None:
    """Declare what a shape mismatch inside `function` breaks (see `shape_failure`)."""
    SHAPE_PROPERTIES[function] = explain


def shape_mismatch(out: Outcome) -> tuple[str, list[tuple[int, ...]]] | None:
    """What numpy's shape error in `out` means, and the shapes it names; None for any other
    error."""
    if out.error_type not in ("ValueError", "IndexError", "AxisError"):
        return None
    for words, meaning in _SHAPE_ERRORS:
        if words in out.error_message:
            shapes = [
                tuple(int(n) for n in re.findall(r"\d+", m))
                for m in _SHAPE.findall(out.error_message)
            ]
            return meaning, [s for s in shapes if s]
    return None


def _shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def shape_failure(c: Call, mismatch: tuple[str, list[tuple[int, ...]]]) -> str:
    """The message for a call that stopped on arrays whose shapes do not fit: the inputs'
    shapes, what went wrong in words, and the property it breaks."""
    meaning, shapes = mismatch
    inputs = [a for a in (*c.args, *c.kwargs.values()) if isinstance(a, np.ndarray)]
    given = ", ".join(_shape_text(a.shape) for a in inputs)
    seen = f" (shapes {' and '.join(_shape_text(s) for s in shapes)})" if shapes else ""
    explain = SHAPE_PROPERTIES.get(c.function)
    prop = explain(c, shapes) if explain else SHAPE_CONTRACT
    return f"{c.function} stopped for inputs of shapes {given}: {meaning}{seen}. {prop}"


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
        raise Fail(f"{what}: wrong values. {hint}".rstrip())


def expect_equal(got: Any, want: np.ndarray, what: str, hint: str = "") -> None:
    """Exact equality, for masks and exact zeros."""
    want = np.asarray(want)
    expect_shape(got, want.shape, what, hint)
    if got.dtype != want.dtype:
        raise Fail(f"{what}: dtype {got.dtype}, expected {want.dtype}. {hint}".rstrip())
    if not np.array_equal(got, want):
        raise Fail(f"{what}: wrong values. {hint}".rstrip())


def _constant(x: np.ndarray) -> bool:
    return x.size > 1 and bool(np.all((x == x.flat[0]) | (np.isnan(x) & np.isnan(x.flat[0]))))


def expect_not_constant(got: np.ndarray, what: str, like: np.ndarray | None = None) -> np.ndarray:
    """An array that is not one value everywhere where the contract's result `like` is not
    either (unfinished code often returns zeros or ones of the right shape; a fully masked
    input's weights are rightly all zeros)."""
    if _constant(got) and (like is None or not _constant(np.asarray(like, dtype=float))):
        value = _number_text(got.flat[0])
        raise Fail(f"{what}: every entry is {value}, where the values must vary with the input")
    return got


def _number_text(x: Any) -> str:
    """A number as a student reads it: 1, 0.5, -inf."""
    return np.format_float_positional(float(x), precision=4, trim="-") if np.isfinite(x) else str(x)


def expect_rank(got: Any, like: np.ndarray, what: str) -> np.ndarray:
    """A float array with as many dimensions as the contract's result `like`. For relational
    tests (batch against slices, read-only against writable): the exact shape and the values
    have tests of their own, so these only need the rank. (A function that returns one value
    whatever its input is told apart before any test: session.py.)"""
    got = expect_array(got, what)
    if got.ndim != like.ndim:
        raise Fail(f"{what}: shape {got.shape}, expected {like.ndim} dimensions like {like.shape}")
    return got


class ArrayReader:
    """Reads the array a student's function returns, checked against its reference.

    `hint` is the advice shape failures carry unless a test gives its own."""

    def __init__(self, reference: Callable[..., np.ndarray], hint: str):
        self.reference = reference
        self.hint = hint

    def checked(self, student: Student, c: Call, what: str, hint: str | None = None) -> np.ndarray:
        """The student's result for `c`: the reference's shape, a float array."""
        want = self.reference(*c.args, **c.kwargs)
        got = expect_shape(student.value(c), want.shape, what, self.hint if hint is None else hint)
        return expect_array(got, what)

    def ranked(self, student: Student, c: Call, what: str) -> np.ndarray:
        """The student's result for `c` as a float array of the reference's rank, not one value
        everywhere (see `expect_rank`), for relational tests."""
        got = student.value(c)
        return expect_rank(got, self.reference(*c.args, **c.kwargs), what)


def expect_batch_slice(
    batch: Any,
    lead: tuple,
    i: tuple,
    single: np.ndarray,
    what: str,
    hint: str,
    batch_what: str | None = None,
) -> None:
    """Slice `i` of a batched result equals `single`, the result for that slice on its own.

    The batch must have the batch dimensions `lead` followed by the shape of `single`;
    `batch_what` names the batch in that failure (default: `what`)."""
    batch = expect_array(batch, what)
    if batch.shape != (*lead, *single.shape):
        raise Fail(
            f"{batch_what or what}: shape {batch.shape}, expected the batch dimensions {lead} "
            f"followed by the shape {single.shape} of the result for one slice. {hint}"
        )
    expect_close(batch[i], single, what, hint, RELATION_RTOL, RELATION_ATOL)


def expect_readonly_twin(got: np.ndarray, got_ro: Any, name: str, hint: str) -> None:
    """`got_ro`, from a call with read-only inputs, equals `got` from the same call with writable
    ones (code that writes into an input raises on read-only arrays)."""
    what = f"{name} for read-only inputs, against writable ones"
    expect_close(got_ro, got, what, hint, RELATION_RTOL, RELATION_ATOL)


def expect_zero_where(got: np.ndarray, mask: np.ndarray, what: str, hint: str) -> None:
    """The entries of `got` where `mask` is True are exactly 0 (forbidden attention weights)."""
    expect_equal(got[mask], np.zeros(int(mask.sum()), dtype=got.dtype), what, hint)


def renormalised(w: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Unmasked weights restricted to the allowed keys and rescaled: what a mask must give."""
    with np.errstate(all="ignore"):
        kept = np.where(mask, 0.0, w)
        return kept / kept.sum(axis=-1, keepdims=True)


# Functions returning (output, weights): attention and its variants. Tests compare the weights
# first, as wrong weights explain a wrong output.
PAIR_PARTS = (("weights", 1), ("output", 0))
Reference = Callable[..., tuple[np.ndarray, np.ndarray]]


class PairReader:
    """Reads the (output, weights) a student's function returns, checked against its reference.

    `hint` is the advice shape failures carry unless a test gives its own."""

    def __init__(self, reference: Reference, hint: str):
        self.reference = reference
        self.hint = hint

    def checked(
        self, student: Student, c: Call, what: str, hint: str | None = None, varies: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """The student's (output, weights) for `c`, with the shapes of the reference's and float
        dtype checked (and, unless `varies` is False, an output that is not one value
        everywhere, as no real one is)."""
        hint = self.hint if hint is None else hint
        out, w = student.pair(c)
        want_out, want_w = self.reference(*c.args, **c.kwargs)
        expect_shape(out, want_out.shape, f"output of {what}", hint)
        expect_shape(w, want_w.shape, f"weights of {what}", hint)
        expect_array(out, f"output of {what}")
        expect_array(w, f"weights of {what}")
        if varies:
            expect_not_constant(out, f"output of {what}", want_out)
        return out, w

    def ranked(self, student: Student, c: Call, what: str) -> tuple[np.ndarray, np.ndarray]:
        """The student's (output, weights) for `c` as float arrays of the reference's ranks,
        neither one value everywhere (see `expect_rank`), for relational tests."""
        out, w = student.pair(c)
        want_out, want_w = self.reference(*c.args, **c.kwargs)
        return expect_rank(out, want_out, f"output of {what}"), expect_rank(
            w, want_w, f"weights of {what}"
        )


def expect_pair_slice(
    batch: tuple,
    lead: tuple,
    i: tuple,
    single: tuple,
    name: str,
    hint: str,
    batch_name: str | None = None,
) -> None:
    """Slice `i` of a batch's (output, weights) equals the (output, weights) of slice `name` on
    its own (see `expect_batch_slice`; `batch_name` names the batch in a shape failure)."""
    for part, k in PAIR_PARTS:
        expect_batch_slice(
            batch[k],
            lead,
            i,
            single[k],
            f"{part} of {name}, against it alone",
            hint,
            batch_what=f"{part} of {batch_name}" if batch_name else None,
        )


def expect_pair_close(
    got: tuple, want: tuple, what: str, hint: str, rtol: float = RTOL, atol: float = ATOL
) -> None:
    """An (output, weights) pair has the values of `want`, weights first; `what` follows the
    part's name in a failure ("of 3 queries" gives "weights of 3 queries: ...")."""
    for part, k in PAIR_PARTS:
        expect_close(got[k], want[k], f"{part} {what}", hint, rtol=rtol, atol=atol)


def expect_pair_readonly_twin(got: tuple, got_ro: tuple, hint: str) -> None:
    """The (output, weights) of a call with read-only inputs equal those with writable ones."""
    expect_pair_close(got_ro, got, "for read-only inputs, against writable ones", hint)


def expect_unmodified(student: Student, c: Call, hint: str = "", like: Call | None = None) -> None:
    """`c`, a call with read-only inputs, ran to a value.

    Its inputs lie in memory the sandbox cannot write (a sealed file mapped read-only), so they
    are unchanged by construction, whatever the student's process does or says; code that writes
    into an input raises there (numpy refuses), or is stopped by the kernel. The worker calls the
    function twice on the same arrays and keeps the second value, so code that changes an
    input's shape instead (`X.shape = ...`) fails there, or gives other values. `like`, the same
    call with writable inputs, tells that apart from a function that fails anyway. The test
    compares the values itself (`expect_readonly_twin`)."""
    if not _call_of(c).readonly:
        raise TypeError(f"{_call_of(c).key}: expect_unmodified reads a read-only call")
    if like is not None:
        student.value(like)  # a function that fails on writable inputs too: that failure
    out = student.outcome(c)
    if out.status in ("error", "crashed", "unreadable"):
        raise Fail(
            f"{_call_of(c).function} modified an input array in place: with read-only inputs "
            f"it {out.describe()}. {hint}".rstrip()
        )
    student.value(c)


def same_value(got: Any, want: Any, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Whether `got` is `want` at the graders' tolerance: an array of its shape (booleans
    exactly, numbers within rtol/atol, NaN only where `want` has NaN), tuples and lists item by
    item. For comparing a function's values with the course's, not for telling a student why."""
    if isinstance(want, (tuple, list)):
        return (
            isinstance(got, (tuple, list))
            and len(got) == len(want)
            and all(same_value(g, w, rtol, atol) for g, w in zip(got, want, strict=True))
        )
    want = np.asarray(want)
    if isinstance(got, (bool, int, float)) and not isinstance(got, np.ndarray):
        got = np.asarray(got)
    if not isinstance(got, np.ndarray) or got.shape != want.shape:
        return False
    if want.dtype == bool or got.dtype == bool:
        return got.dtype == want.dtype and bool(np.array_equal(got, want))
    try:
        return bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))
    except TypeError:
        return False


def expect_no_warnings(student: Student, c: Call, hint: str = "") -> None:
    """No numeric RuntimeWarning (overflow, invalid value, divide by zero) during the call.

    Other warnings a student's code emits on purpose are not the numerics' fault and cost
    nothing."""
    out = student.outcome(c)
    numeric = [w for w in out.warnings if w.startswith("RuntimeWarning")]
    if numeric:
        raise Fail(f"{_call_of(c).function} emitted a warning ({numeric[0]}). {hint}".rstrip())
