"""The graders without pytest's machinery, for a process that grades one submission after
another (a grading job, `check`): grader files are imported once, and each submission costs
one program run in the sandbox and one plain call per grader test.

It runs exactly what `pytest grader_tests` runs (a test compares the two): the grader files'
`test_*` functions in file order, with the `student`, `passed_only_with_course` and
`passed_only_with_callees` arguments pytest_plugin.py gives them, through the same `Session`.
The grader files are the course's, imported by path (course_graders.py).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_course.course import Course
from attention_course.grading import course_graders, harness
from attention_course.grading.notebook import program_from_file
from attention_course.grading.session import CALLEE_NOTE, HELPER_NOTE, Session, record, report
from attention_course.sandbox.program import Call, run_program, submission_deadline
from attention_course.settings import Limits


@dataclass(frozen=True)
class GraderTest:
    function: str
    name: str
    fn: Callable
    points: float
    params: tuple[str, ...]


_MODULES: dict[tuple[str, str, str | None], tuple[list[GraderTest], list[Call]]] = {}
_SEEDS: dict[tuple[str, str], Course] = {}  # seeds whose grader modules are kept, oldest first
KEEP_SEEDS = 4  # a grading process keeps the graders of its last few submissions' seeds
_LOADING = threading.Lock()  # grading itself is safe in threads; importing is done once


def load(
    course: Course, function: str, seed: str | None = None
) -> tuple[list[GraderTest], list[Call]]:
    """The grader tests of `function` (file order) and the calls its file declares, their
    inputs drawn with `seed` (None: each grader's own fixed seeds)."""
    with _LOADING:
        if seed is not None:
            _keep(course, seed)
        return _load(course, function, seed)


def _keep(course: Course, seed: str) -> None:
    """Note `seed` as wanted now; forget the graders of the oldest past KEEP_SEEDS."""
    key = (str(course.grader_dir), seed)
    _SEEDS[key] = _SEEDS.pop(key, course)
    while len(_SEEDS) > KEEP_SEEDS:
        (folder, old), old_course = next(iter(_SEEDS.items()))
        del _SEEDS[(folder, old)]
        harness.forget(course_graders.forget(old_course, old))
        for k in [k for k in _MODULES if k[0] == folder and k[2] == old]:
            del _MODULES[k]


def _load(course: Course, function: str, seed: str | None) -> tuple[list[GraderTest], list[Call]]:
    key = (str(course.grader_dir), function, seed)
    if key not in _MODULES:
        module = course_graders.grader(course, function, seed)
        # its own calls, and those of the grader modules it uses (pasted_helpers' checks)
        uses = {module.__name__} | {
            getattr(v, "__module__", "") for v in vars(module).values() if callable(v)
        }
        calls = [c for name in sorted(uses) for c in harness.DECLARED_BY.get(name, [])]
        tests = [
            GraderTest(
                function, name, fn, harness.points_of(fn), tuple(inspect.signature(fn).parameters)
            )
            for name, fn in vars(module).items()
            if name.startswith("test_")
            and inspect.isfunction(fn)
            and fn.__module__ == module.__name__
        ]
        tests.sort(key=lambda t: t.fn.__code__.co_firstlineno)
        _MODULES[key] = (tests, calls)
    return _MODULES[key]


def collect(
    course: Course, functions: list[str], seed: str | None = None
) -> tuple[list[GraderTest], list[Call], list[str]]:
    """The grader tests and calls of `functions` for `seed`, and the faults of grader files
    that do not import."""
    faults: list[str] = []
    tests: list[GraderTest] = []
    calls: list[Call] = []
    for function in functions:
        try:
            found, declared = load(course, function, seed)
        except Exception as exc:  # a grader file that does not import: a fault of grading
            faults.append(f"{course.assignment_grader(function)}: could not be collected ({exc})")
            continue
        tests += found
        calls += declared
    calls = list({c.key: c for c in calls}.values())  # files may share a helper's calls
    return tests, calls, faults


def run_tests(session: Session, tests: list[GraderTest], faults: list[str]) -> list[dict]:
    """Every grader test through `session`, in order: one record each (faults appended)."""
    results = []
    for t in tests:
        args: dict[str, Any] = {}
        message, passed = "", False
        try:
            if "student" in t.params:
                args["student"] = session.student
            if HELPER_NOTE in t.params:
                args[HELPER_NOTE] = session.passed_only_with_course.get(t.function, [])
            if CALLEE_NOTE in t.params:
                args[CALLEE_NOTE] = session.passed_only_with_callees.get(t.function, {})
            session.call(t.fn, t.function, args)
            passed = True
        except harness.Fail as exc:
            message = str(exc)
        except Exception as exc:
            text = str(exc).strip().splitlines()
            faults.append(
                f"{t.function}::{t.name}: {type(exc).__name__}: {text[0] if text else ''}"[:500]
            )
        results.append(record(t.function, t.name, t.fn, t.points, passed, message))
    return results


def grade(
    course: Course,
    submission: Path,
    functions: list[str],
    unsandboxed: bool = False,
    hide: Sequence[Path] = (),
    deadline: float | None = None,
    limits: Limits | None = None,
    seed: str | None = None,
) -> dict:
    """The report `pytest grader_tests --submission ... --report` writes, for `functions`.

    `deadline` (time.monotonic()): the submission's, shared by every program run of it
    (default: the submission's time from now). `seed`: the submission's (seeds.py), with
    which the graders draw their inputs (None: their own fixed seeds)."""
    limits = limits or Limits()
    if deadline is None:
        deadline = submission_deadline(limits)
    tests, calls, faults = collect(course, functions, seed)

    def run(cells, wanted, outside=None):
        hidden = [*course.hidden(), *hide]
        return run_program(
            cells,
            wanted,
            limits,
            hide=hidden,
            unsandboxed=unsandboxed,
            deadline=deadline,
            outside=outside,
        )

    session = Session(program_from_file(submission), calls, run, course)
    results = run_tests(session, tests, faults)
    return dict(report(session, results, faults), seed=seed)
