"""Grading trusted code directly in this process: the graders, without a sandbox or notebook.

For the catalogue and other code of the course's own, graded under many seeds at little cost: a
program's cells run in a fresh namespace per program run, and each declared call is made as the
worker makes it (writable inputs a private copy; read-only ones immutable, called twice; values
copied back as plain arrays; warnings recorded; functions given from outside replaced by
stand-ins that record their calls). The graders then run through the real `Session` and
`runner.run_tests`. Student code is never graded this way: it runs in the sandbox only.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from attention_course.course import Course
from attention_course.grading import runner
from attention_course.grading.session import Session
from attention_course.sandbox.program import CellReport, Outcome, OutsideCall, ProgramRun


def _copy(value: Any, readonly: bool = False) -> Any:
    if isinstance(value, np.ndarray):
        if readonly:  # a buffer nobody may write: numpy refuses, as with the worker's mapping
            flat = np.frombuffer(np.ascontiguousarray(value).tobytes(), value.dtype)
            return flat.reshape(value.shape)
        return np.array(value, copy=True)
    if isinstance(value, (tuple, list)):
        return type(value)(_copy(v, readonly) for v in value)
    return value


def _plain(value: Any) -> Any:
    """A value as it comes back from the worker, or TypeError."""
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True, subok=False)
    if isinstance(value, np.generic) or value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value[:500]
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    raise TypeError(type(value).__name__)


def run_here(cells: list[tuple[str, str]], calls: list, outside: dict | None = None) -> ProgramRun:
    """What run_program gives for trusted code, in this process."""
    if len({c.key for c in calls}) != len(calls):
        raise ValueError("call keys must be unique")  # as run_program refuses them
    namespace: dict[str, Any] = {"__name__": "__main__"}
    errors = []
    for index, (cid, source) in enumerate(cells):
        try:
            exec(compile(source, f"<cell {cid}>", "exec"), namespace)
        except Exception as exc:
            errors.append(CellReport(index, cid, type(exc).__name__, str(exc)[:500]))
    outcomes: dict[str, Outcome] = {}
    asked: dict[str, list[OutsideCall]] = {}
    for c in sorted(calls, key=lambda c: c.readonly):
        for name, fn in (outside or {}).items():
            namespace[name] = _stand_in(name, fn, asked.setdefault(c.key, []))
        outcomes[c.key] = _call(namespace, c)
    return ProgramRun(outcomes, errors, [], 1, {k: v for k, v in asked.items() if v})


class OutsideError(Exception):
    """What the worker raises when the course's function refuses the arguments it is given."""


def _stand_in(name: str, fn, log: list[OutsideCall]):
    def outside(*args, **kwargs):
        args, kwargs = _plain(args), _plain(kwargs)
        try:
            with np.errstate(all="ignore"):
                value = fn(*args, **kwargs)
        except Exception:  # as the sandbox's outside side says it (sandbox/program.py)
            raise OutsideError(f"the course's {name} could not take these arguments") from None
        log.append(OutsideCall(name, args, kwargs, value))
        return _copy(value)

    return outside


def _call(namespace: dict[str, Any], c) -> Outcome:
    fn = namespace.get(c.function)
    if not callable(fn):
        return Outcome("missing")
    args = _copy(c.args, c.readonly)
    kwargs = {k: _copy(v, c.readonly) for k, v in c.kwargs.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for _ in range(2 if c.readonly else 1):
                if c.errstate:
                    with np.errstate(over="raise", invalid="raise", divide="raise"):
                        value = fn(*args, **kwargs)
                else:
                    value = fn(*args, **kwargs)
        except Exception as exc:
            out = Outcome("error", error_type=type(exc).__name__, error_message=str(exc)[:500])
        else:
            try:
                out = Outcome("ok", value=_plain(value))
            except TypeError as exc:
                out = Outcome("unreadable", detail=f"returned {exc}, not arrays or numbers")
    out.warnings = [f"{w.category.__name__}: {w.message}"[:500] for w in caught[:10]]
    return out


def records_here(
    course: Course, program: list[tuple[str, str]], functions: list[str], seed: str | None
) -> list[dict]:
    """The report's records for `functions` of `program` with the graders' inputs of `seed`."""
    tests, calls, faults, draw = runner.collect(course, functions, seed)
    session = Session(program, calls, run_here, course, draw, runner.cases_for(course, seed))
    results = session.grade(tests, faults)
    assert not faults, faults
    return results


def grade_here(
    course: Course, program: list[tuple[str, str]], function: str, seed: str | None
) -> dict[str, bool]:
    """Test name -> passed, for `function` of `program` with the graders' inputs of `seed`."""
    return {r["test"]: r["passed"] for r in records_here(course, program, [function], seed)}
