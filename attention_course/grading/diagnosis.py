"""What a failing function seems to do: misconception models compared with its outcomes.

A course declares its misconception models beside its reference (grader_tests/misconceptions.py):
each a small variant of the reference that makes one classic mistake, with a label, the mistake
in words, the idea behind the right way, and the section of the exercise contract that says it:

    MODELS = Models()

    @MODELS.model("scaled_dot_product_attention", "scaled_by_d_k",
                  did="divides the scores by d_k, not by its square root", ...)
    def scaled_by_d_k(Q, K, V, mask=None): ...

A failing test is diagnosed by running the models of each function it called on the same
inputs, under the same conditions as the student's call (read-only inputs, numpy's errors
raised), here outside the sandbox (the models are the course's code). A model explains the
failure when it gives what the student's function gave wherever the student's function differs
from the reference, and agrees with the student's function on the test's other calls as well.
The hint names the model that explains it, and only when exactly one mistake does; otherwise
the feedback says which property fails on which input, and nothing else.

A few mistakes are told by how the call went rather than by a model: the read-only inputs a
function writes into (`in_place`), an array used as one True/False value (`array_truth`).

Where this stands on a submission's way (docs/life-of-a-submission.md): the last step of a
Session (session.py): once a failing test's failures are judged, said once and shrunk, the
models are run on its calls, and the one that explains them is named in its record.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attention_course.grading.harness import ATOL, RTOL, same_value
from attention_course.sandbox.program import Call, Outcome

LEAD = "It looks as if the code"  # how a hint that names a mistake begins


@dataclass(frozen=True)
class Model:
    """One misconception of one function: the function that makes it, and its words."""

    function: str
    label: str  # the misconception's name, shared by the functions that can make it
    fn: Callable[..., Any]
    did: str  # what the code does, as "it ..." would end: "divides the scores by d_k"
    idea: str  # why the contract asks otherwise (the idea, never the finished code)
    section: str  # of docs/exercise-contract.md
    rtol: float = RTOL
    atol: float = ATOL
    # A symptom is told by the student's outcome itself: fn(call, outcome) -> bool, True
    # exactly on the failing calls (a dict without a key the contract names, say).
    symptom: bool = False

    def text(self) -> str:
        return f"{LEAD} {self.did}. {self.idea} (Exercise contract: {self.section}.)"


class Models:
    """A course's misconception models, by function (grader_tests/misconceptions.py)."""

    def __init__(self) -> None:
        self.by_function: dict[str, list[Model]] = {}

    def model(
        self,
        function: str | Iterable[str],
        label: str,
        *,
        did: str,
        idea: str,
        section: str,
        rtol: float = RTOL,
        atol: float = ATOL,
        symptom: bool = False,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Declare the decorated function a model of `label` for `function` (or several): a
        variant of the reference making that mistake, or with `symptom=True` a test of the
        student's outcome, `fn(call, outcome) -> bool`."""

        def declare(fn: Callable[..., Any]) -> Callable[..., Any]:
            for name in [function] if isinstance(function, str) else function:
                m = Model(name, label, fn, did, idea, section, rtol, atol, symptom)
                self.by_function.setdefault(name, []).append(m)
            return fn

        return declare

    def of(self, function: str) -> list[Model]:
        return self.by_function.get(function, [])

    @property
    def labels(self) -> set[str]:
        return {m.label for ms in self.by_function.values() for m in ms}


# --------------------------------------------------------------------------- running a model


def _copy(value: Any, readonly: bool) -> Any:
    if isinstance(value, np.ndarray):
        copy = np.array(value, copy=True)
        copy.flags.writeable = not readonly
        return copy
    if isinstance(value, (tuple, list)):
        return type(value)(_copy(v, readonly) for v in value)
    return value


def outcome_of(fn: Callable[..., Any], call: Call) -> Outcome:
    """What `fn` gives for `call`, as the worker would report it: inputs copied (read-only for
    a read-only call, which is made twice as the worker makes it), numpy's errors raised for an
    errstate call, numeric warnings kept. For the course's own code only."""
    args = _copy(call.args, call.readonly)
    kwargs = {k: _copy(v, call.readonly) for k, v in call.kwargs.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for _ in range(2 if call.readonly else 1):
                if call.errstate:
                    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
                        value = fn(*args, **kwargs)
                else:  # numpy's defaults, as in the worker
                    with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"):
                        value = fn(*args, **kwargs)
            out = Outcome("ok", value=_plain(value))
        except Exception as exc:  # the model's own mistake, as the student's would raise
            out = Outcome("error", error_type=type(exc).__name__, error_message=str(exc)[:500])
    out.warnings = [f"{w.category.__name__}: {w.message}"[:500] for w in caught[:10]]
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


_DIGITS = re.compile(r"\d+")


def _numeric_warnings(out: Outcome) -> bool:
    return any(w.startswith("RuntimeWarning") for w in out.warnings)


def same_outcome(got: Outcome, want: Outcome, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Whether two outcomes of one call are the same: both values (equal at the tolerance, NaN
    where NaN, numeric warnings or none), or both the same kind of error (its type, and its
    message but for the numbers in it)."""
    if got.status != want.status:
        return False
    if got.status == "error":
        return got.error_type == want.error_type and _DIGITS.sub("#", got.error_message) == (
            _DIGITS.sub("#", want.error_message)
        )
    if got.status != "ok":
        return False
    return _numeric_warnings(got) == _numeric_warnings(want) and _same(
        got.value, want.value, rtol, atol
    )


def _same(got: Any, want: Any, rtol: float, atol: float) -> bool:
    if isinstance(want, dict):  # the entries the model returns (a function may add others)
        return isinstance(got, dict) and all(
            k in got and _same(got[k], want[k], rtol, atol) for k in want
        )
    if _number(want):
        if not _number(got) or _integral(want) != _integral(got):
            return False  # an int count and a float count are two outcomes
    if isinstance(want, np.ndarray) and isinstance(got, np.ndarray):
        if _kind(got.dtype) != _kind(want.dtype):  # bools, integers and floats are three results
            return False
    try:
        return same_value(got, want, rtol, atol)
    except (TypeError, ValueError):
        return False


def _number(x: Any) -> bool:
    return isinstance(x, (int, float, np.number)) and not isinstance(x, (bool, np.bool_))


def _integral(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _kind(dtype: np.dtype) -> str:
    return "i" if dtype.kind == "u" else dtype.kind


# --------------------------------------------------------------------------- built-in mistakes


@dataclass(frozen=True)
class Behaviour:
    """A mistake told by how a call went, whatever the function: its label and words."""

    label: str
    did: str
    idea: str
    section: str

    def text(self) -> str:
        return f"{LEAD} {self.did}. {self.idea} (Exercise contract: {self.section}.)"


IN_PLACE = Behaviour(
    "in_place",
    "writes into an input array (in place) instead of building new arrays",
    "The caller's arrays must be left as they were: they may be used again, or be read-only, "
    "as these were. An update such as `z -= m`, an `out=` argument naming an input, or a shape "
    "set on an input changes the caller's array; build the result in new arrays instead.",
    "Conventions, pure functions",
)
ARRAY_TRUTH = Behaviour(
    "array_truth",
    "uses an array where one True or False is needed (an `if` on an array, or `and`/`or` "
    "between arrays)",
    "numpy cannot say whether a whole array is true, so it raises; whether an optional argument "
    "was given is a question about the argument itself (is it None?), not about its entries.",
    "Conventions, a mask",
)
READ_ONLY_WORDS = ("read-only", "not writeable", "WRITEABLE")
TRUTH_WORDS = "truth value of an array with more than one element is ambiguous"


def behaviour(call: Call, got: Outcome, writable: Outcome | None) -> Behaviour | None:
    """The built-in mistake a failing call shows: `in_place` for a read-only call that fails or
    differs where its writable twin (`writable`) went on; `array_truth` for numpy's complaint
    about an array's truth value."""
    if got.status == "error" and TRUTH_WORDS in got.error_message:
        return ARRAY_TRUTH
    if call.readonly:
        if got.status == "error" and any(w in got.error_message for w in READ_ONLY_WORDS):
            return IN_PLACE
        if writable is not None and writable.status == "ok" and not same_outcome(got, writable):
            return IN_PLACE
    return None


# --------------------------------------------------------------------------- explaining a test


@dataclass
class Evidence:
    """The calls a failing test made, and what came of each: the student's outcome and the
    reference's; `failing` are the calls whose outcome is not the reference's."""

    calls: list[Call] = field(default_factory=list)
    student: dict[str, Outcome] = field(default_factory=dict)
    reference: dict[str, Outcome] = field(default_factory=dict)

    def add(self, call: Call, student: Outcome, reference: Outcome) -> None:
        if call.key not in self.student:
            self.calls.append(call)
            self.student[call.key] = student
            self.reference[call.key] = reference

    @property
    def failing(self) -> list[Call]:
        return [
            c for c in self.calls if not same_outcome(self.student[c.key], self.reference[c.key])
        ]


class Diagnoser:
    """Runs models on calls (each model once per call) and finds the ones that explain."""

    def __init__(self, models: Models, reference: Mapping[str, Callable[..., Any]]):
        self.models = models
        self.reference = reference
        self._memo: dict[tuple[str, str], Outcome] = {}

    def reference_outcome(self, call: Call) -> Outcome:
        return self._run(call, "", self.reference[call.function])

    def _run(self, call: Call, label: str, fn: Callable[..., Any]) -> Outcome:
        key = (call.key, label)
        if key not in self._memo:
            self._memo[key] = outcome_of(fn, call)
        return self._memo[key]

    def explaining(self, evidence: Evidence) -> list[Model]:
        """The models that explain every failing call of `evidence` and agree with the student
        on its other calls: the first model of each label that does, labels in declaration
        order. A model explains the failing calls when it gives what the student's function gave
        on each, and on one of them at least, at the tolerance it is matched with, not what the
        reference gives: its mistake shows (a model of arithmetic in float32, matched loosely,
        explains no near miss of another kind)."""
        failing = evidence.failing
        if not failing:
            return []
        found: dict[str, Model] = {}
        for function in dict.fromkeys(c.function for c in failing):
            for model in self.models.of(function):
                if model.label not in found and self._explains(model, evidence, failing):
                    found[model.label] = model
        return list(found.values())

    def explains(self, model: Model, evidence: Evidence) -> bool:
        """Whether `model` explains every failing call of `evidence` and agrees with the
        student on its other calls."""
        return self._explains(model, evidence, evidence.failing)

    def _explains(self, model: Model, evidence: Evidence, failing: list[Call]) -> bool:
        visible = False  # the model's mistake shows on some failing call beyond its slack
        for call in evidence.calls:
            got = evidence.student[call.key]
            if call.function != model.function:  # another function's call must be right
                if call in failing:
                    return False
                continue
            if model.symptom:
                if model.fn(call, got) != (call in failing):
                    return False
                continue
            want = self._run(call, f"{model.label}:{id(model)}", model.fn)
            if not same_outcome(got, want, model.rtol, model.atol):
                return False
            if call in failing and not same_outcome(
                evidence.reference[call.key], want, model.rtol, model.atol
            ):
                visible = True
        return visible or model.symptom
