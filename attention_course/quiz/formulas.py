"""The registry of named formulas that compute the answers of templated questions.

A course's quiz folder holds a `formulas.py` whose functions are marked with `@formula`; banks
refer to them by name (``template: head_dim``), and a function's keyword parameters are the
bank parameters it uses. The engine loads that file by path (`load_formulas`): every answer a
student is graded against comes out of one of the course's functions, none typed in by hand.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path

from attention_course.errors import UserError

Shape = tuple[int, ...]
Formula = Callable[..., float | int | Shape]

FORMULAS: dict[str, Formula] = {}  # every formula of the course files loaded so far
_LOADED: set[Path] = set()


def formula(func: Formula) -> Formula:
    """Register ``func`` under its own name so that banks can refer to it."""
    FORMULAS[func.__name__] = func
    return func


def load_formulas(path: Path | None) -> None:
    """Import a course's formulas file (once), which registers its formulas."""
    if path is None:
        return
    path = Path(path).resolve()
    if path in _LOADED:
        return
    name = "attention_course_formulas_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise UserError(f"{path}: the course's formulas file is missing")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise UserError(f"{path}: the course's formulas do not load ({exc})") from None
    _LOADED.add(path)


def parameters_of(name: str) -> list[str]:
    """The bank parameters a formula needs, in its signature's order."""
    return list(inspect.signature(FORMULAS[name]).parameters)


def evaluate(name: str, params: dict[str, object]) -> float | int | Shape:
    """Run formula ``name`` on the parameters it needs, taken from ``params``."""
    func = FORMULAS[name]
    return func(**{p: params[p] for p in parameters_of(name)})
