"""The graders without pytest's machinery, for a process that grades one submission after
another (a grading job, `check`): grader files are imported once, and each submission costs its
cases drawn with its seed, one program run in the sandbox (and more where a failing test is run
again, shrunk or its callees taken out: session.py), and one plain call per test and case.

It runs exactly what `pytest grader_tests` runs (a test compares the two): the grader files'
`test_*` functions in file order, through the same `Session`. The grader files are the course's,
imported by path (course_graders.py).

Where this stands on a submission's way (docs/life-of-a-submission.md): graders.grade_file calls
`grade` (in process, the default): the grader files loaded once (course_graders.py), their cases
drawn with the submission's source (draws.py), then one Session (session.py), whose records are
the report grade_file reads.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from attention_course.course import Course
from attention_course.grading import course_graders, harness
from attention_course.grading.draws import Case, Draw
from attention_course.grading.notebook import program_from_file
from attention_course.grading.session import Session, report
from attention_course.grading.verdicts import GraderTest
from attention_course.sandbox.program import Call, run_program, submission_deadline
from attention_course.settings import Limits

_LOADING = threading.Lock()  # grading itself is safe in threads; importing is done once


def tests_of(module: ModuleType, function: str) -> list[GraderTest]:
    """A grader module's tests, in file order (without their cases)."""
    found = [
        GraderTest(
            function,
            name,
            fn,
            harness.points_of(fn),
            tuple(inspect.signature(fn).parameters),
            getattr(fn, harness.OVER, None),
        )
        for name, fn in vars(module).items()
        if name.startswith("test_") and inspect.isfunction(fn) and fn.__module__ == module.__name__
    ]
    found.sort(key=lambda t: t.fn.__code__.co_firstlineno)
    return found


def cases_of(module: ModuleType, draw: Draw) -> dict[str, list[Case]]:
    """A grader module's cases for one submission: its `@cases` function called with `draw`,
    the submission's seeded source for that file (`Draw.for_grader`), in the open."""
    makers = [v for v in vars(module).values() if callable(v) and getattr(v, harness.CASES, False)]
    if len(makers) > 1:
        raise ValueError(f"{module.__name__} has {len(makers)} @cases functions; one is read")
    if not makers:
        return {}
    found = makers[0](draw)
    if not isinstance(found, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(c, Case) for c in v)
        for k, v in found.items()
    ):
        raise TypeError(f"{module.__name__}: @cases must return {{family: [Case, ...]}}")
    for family, found_cases in found.items():
        for case in found_cases:
            case.group = case.group or family
    return found


def load(course: Course, function: str) -> tuple[ModuleType, list[GraderTest]]:
    """The grader module of `function` and its tests (imported once per process)."""
    with _LOADING:
        module = course_graders.grader(course, function)
    return module, tests_of(module, function)


def collect(
    course: Course, functions: Sequence[str], seed: str | None = None
) -> tuple[list[GraderTest], list[Call], list[str], Draw]:
    """The tests of `functions`' grader files with their cases drawn for `seed`, every call
    those cases make, the faults of grader files that do not load, and the seeded source."""
    draw = Draw(course_graders.contract(course), seed)
    faults: list[str] = []
    tests: list[GraderTest] = []
    calls: dict[str, Call] = {}
    for function in functions:
        try:
            module, found = load(course, function)
            cases = cases_of(module, draw.for_grader(function))
            for t in found:
                unknown = [f for f in t.over or () if f not in cases]
                if unknown:
                    raise ValueError(f"{t.name} is checked on {unknown[0]!r}, which @cases lacks")
        except Exception as exc:  # a grader file that does not load: a fault of grading
            faults.append(f"{course.assignment_grader(function)}: could not be collected ({exc})")
            continue
        tests += [_with_cases(t, cases) for t in found]
        for family in cases.values():
            for case in family:
                for c in case.calls():
                    calls.setdefault(c.key, c)
    return tests, list(calls.values()), faults, draw


def cases_for(course: Course, seed: str | None) -> Callable[[str], list[Call]]:
    """`function` -> the calls of its grader's cases for `seed` (a Session's `cases_of`)."""
    return lambda function: collect(course, [function], seed)[1]


def _with_cases(test: GraderTest, cases: dict[str, list[Case]]) -> GraderTest:
    return GraderTest(test.function, test.name, test.fn, test.points, test.params, test.over, cases)


def grade(
    course: Course,
    submission: Path,
    functions: list[str],
    unsandboxed: bool = False,
    hide: Sequence[Path] = (),
    deadline: float | None = None,
    limits: Limits | None = None,
    seed: str | None = None,
) -> dict[str, Any]:
    """The report `pytest grader_tests --submission ... --report` writes, for `functions`.

    `deadline` (time.monotonic()): the submission's, shared by every program run of it
    (default: the submission's time from now). `limits`: by default the course's (course.toml's
    [limits]). `seed`: the submission's (seeds.py), with which the graders draw their inputs
    (None: their own fixed seeds)."""
    limits = limits or course.limits  # course.toml's [limits]
    if deadline is None:
        deadline = submission_deadline(limits)
    tests, calls, faults, draw = collect(course, functions, seed)

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

    session = Session(
        program_from_file(submission), calls, run, course, draw, cases_for(course, seed)
    )
    results = session.grade(tests, faults)
    return dict(report(session, results, faults), seed=seed)
