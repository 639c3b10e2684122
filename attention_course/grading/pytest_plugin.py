"""The pytest plugin of a course's graders: runs the declared calls of the collected grader files
in one worker and reports points. A course's grader_tests/conftest.py imports it.

Where this stands on a submission's way (docs/life-of-a-submission.md): plain nbgrader's
autograde and formgrader grade through it (`graders.grade_file(in_process=False)` starts
`pytest grader_tests` in a process of its own); an instructor runs it by hand. The engine's own
commands grade without pytest (runner.py), through the same `Session`.

The session itself (one program run, pass/fail/fault, pasted helpers and graded callees) is
session.py, which the grading jobs also run without pytest (runner.py).

Options (see `pytest grader_tests --help`):
  --course DIR        the course whose graders these are (default: pytest's rootdir)
  --submission PATH   a filled-in notebook (.ipynb) or a Python file; default: the reference
  --report PATH       write a JSON report (per test: function, points, passed, message)
  --unsandboxed       run the student's worker without the sandbox (limits only)
  --deadline EPOCH    the submission's absolute deadline, in seconds since the epoch (default:
                      the submission's time from the start of the session)
  --seed HEX          the submission's seed (grading/seeds.py), with which the graders draw
                      their inputs (default: their own fixed seeds)
  --seed-file PATH    the same, read from a file (how grade_file hands it over: a seed on a
                      command line is shown to every account)
"""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path
from typing import Any

import pytest

from attention_course.course import Course
from attention_course.grading import course_graders, harness
from attention_course.grading.draws import Draw
from attention_course.grading.runner import cases_for, cases_of
from attention_course.grading.seeds import check_seed
from attention_course.grading.session import Session, report
from attention_course.grading.verdicts import GraderTest
from attention_course.sandbox.program import run_program, submission_deadline

_ITEMS = pytest.StashKey[list]()  # the collected grader tests
_POINTS = pytest.StashKey[dict]()  # their points, by node id, as collected
_FAULTS = pytest.StashKey[list]()  # what went wrong in the graders themselves
_SESSION = pytest.StashKey[tuple]()  # the submission's grading session and its records


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("attention-course graders")
    group.addoption("--course", default=None, help="the course folder (default: the rootdir)")
    group.addoption(
        "--submission",
        default=None,
        help="notebook (.ipynb) or Python file to grade (default: the reference)",
    )
    group.addoption("--report", default=None, help="write a JSON grading report here")
    group.addoption(
        "--hide",
        action="append",
        default=[],
        metavar="FOLDER",
        help="another folder the worker must not see (repeatable)",
    )
    group.addoption(
        "--unsandboxed",
        action="store_true",
        help="run the student's worker without the sandbox (limits only; say so to the student)",
    )
    group.addoption(
        "--deadline",
        type=float,
        default=None,
        metavar="EPOCH",
        help="the submission's absolute deadline (seconds since the epoch); default: its time "
        "from the start",
    )
    group.addoption(
        "--seed",
        default=None,
        metavar="HEX",
        help="the submission's seed, with which the graders draw their inputs (default: their "
        "own fixed seeds)",
    )
    group.addoption(
        "--seed-file",
        default=None,
        metavar="PATH",
        help="a file holding the submission's seed (never put a seed on a command line)",
    )


def _course(config: pytest.Config) -> Course:
    return Course.load(config.getoption("--course") or config.rootpath)


def _seed(config: pytest.Config) -> str | None:
    """The submission's seed: --seed, else the file --seed-file names (where a grading process
    puts it: a seed is never put on a command line, where any account can read it)."""
    seed = config.getoption("--seed", None)
    path = config.getoption("--seed-file", None)
    if not seed and path:
        try:
            seed = Path(path).read_text()
        except OSError as exc:
            raise pytest.UsageError(f"--seed-file: {path}: {exc.strerror}") from None
    try:
        return check_seed(seed) if seed else None
    except ValueError as exc:
        raise pytest.UsageError(f"--seed: {exc}") from None


def _function(item: pytest.Item) -> str:
    name = Path(str(item.fspath)).stem
    return name.removeprefix("test_")


def _grader_items(config: pytest.Config) -> list[pytest.Function]:
    """The collected grader tests (that another plugin did not take away)."""
    return config.stash.get(_ITEMS, [])


def _session(config: pytest.Config) -> tuple[Session, list[dict]]:
    """The submission's session and its records, made once, at the first grader test."""
    if _SESSION not in config.stash:
        from attention_course.grading.notebook import program_from_file

        course = _course(config)
        path = config.getoption("--submission")
        hide = [*course.hidden(), *map(Path, config.getoption("--hide"))]
        unsandboxed = config.getoption("--unsandboxed")
        limits = course.limits  # course.toml's [limits]
        epoch = config.getoption("--deadline")
        if epoch is None:
            deadline = submission_deadline(limits)
        else:  # the wall clock of the process that started this one, on this clock
            deadline = time.monotonic() + (epoch - time.time())

        def run(cells, calls, outside=None):
            return run_program(
                cells,
                calls,
                limits,
                hide=hide,
                unsandboxed=unsandboxed,
                deadline=deadline,
                outside=outside,
            )

        seed = _seed(config)
        draw = Draw(course_graders.contract(course), seed)
        tests: list[GraderTest] = []
        calls: dict[str, Any] = {}
        made: dict[str, dict] = {}
        for item in _grader_items(config):
            module = item.module
            function = _function(item)
            if module.__name__ not in made:
                made[module.__name__] = cases_of(module, draw.for_grader(function))
                for family in made[module.__name__].values():
                    for case in family:
                        for c in case.calls():
                            calls.setdefault(c.key, c)
            fn = item.obj
            tests.append(
                GraderTest(
                    function,
                    item.name,
                    fn,
                    config.stash[_POINTS][item.nodeid],
                    tuple(inspect.signature(fn).parameters),
                    getattr(fn, harness.OVER, None),
                    made[module.__name__],
                )
            )
        program = program_from_file(Path(path) if path else course.reference_file)
        session = Session(
            program,
            list(calls.values()),
            run,
            course,
            draw,
            cases_for(course, seed),
        )
        faults = config.stash.setdefault(_FAULTS, [])
        config.stash[_SESSION] = (session, session.grade(tests, faults))
    return config.stash[_SESSION]


# Placeholders for the parameters of property tests: the session gives each its value.
@pytest.fixture
def case() -> None:
    return None


@pytest.fixture
def got() -> None:
    return None


@pytest.fixture
def outcome() -> None:
    return None


@pytest.fixture
def inputs() -> None:
    return None


@pytest.fixture
def student() -> None:
    return None


@pytest.fixture
def passed_only_with_course() -> None:
    return None


@pytest.fixture
def passed_only_with_callees() -> None:
    return None


def _points(item: pytest.Item) -> float:
    """A grader test's points: its `@points(n)` (harness.points_of), else a `points` marker."""
    try:
        return harness.points_of(getattr(item, "obj", None))
    except LookupError:
        marker = item.get_closest_marker("points")
    if marker is None:
        raise pytest.UsageError(f"{item.nodeid} has no points marker")
    return float(marker.args[0])


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items) -> None:
    here = _course(config).grader_dir.resolve()
    for item in items:
        if Path(str(item.fspath)).parent == here and isinstance(item, pytest.Function):
            config.stash.setdefault(_POINTS, {})[item.nodeid] = _points(item)  # every one has


def pytest_collection_finish(session: pytest.Session) -> None:
    """The grader tests to run, once every plugin has chosen its items."""
    points = session.config.stash.get(_POINTS, {})
    session.config.stash[_ITEMS] = [i for i in session.items if i.nodeid in points]


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """A grader test's verdict is the session's (every test judged at once: shrunk, said once,
    diagnosed); the item passes or fails with its message."""
    if pyfuncitem not in _grader_items(pyfuncitem.config):
        return None
    _, records = _session(pyfuncitem.config)
    for r in records:
        if r["function"] == _function(pyfuncitem) and r["test"] == pyfuncitem.name:
            if not r["passed"]:
                raise harness.Fail(r["message"])
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Anything but a grader's own `Fail` that a grader test raises (a grader bug, a worker that
    could not start), and a failed clean-up after it, is a fault of grading, reported as such
    and never turned into points or a zero."""
    outcome = yield
    if (
        outcome.failed
        and call.excinfo is not None
        and outcome.when in ("setup", "call", "teardown")
    ):
        exc = call.excinfo.value
        if not isinstance(exc, harness.Fail):
            text = str(exc).strip().splitlines()
            where = f"{outcome.when}: " if outcome.when == "teardown" else ""
            fault = f"{item.nodeid}: {where}{type(exc).__name__}: {text[0] if text else ''}"
            item.config.stash.setdefault(_FAULTS, []).append(fault[:500])
    return outcome


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:  # a grader file that does not import
        _session_faults.append(f"{report.nodeid}: could not be collected")


_session_faults: list[str] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    _session_faults.clear()  # a grading process runs one session per submission


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = session.config.getoption("--report")
    if not path:
        return
    recorded: list[str] = session.config.stash.get(_FAULTS, [])
    faults = _session_faults + list(dict.fromkeys(recorded))
    if exitstatus not in (0, 1):
        faults.append(f"pytest ended with exit status {int(exitstatus)}")
    graded, tests = session.config.stash.get(_SESSION, (None, []))
    found = dict(report(graded, tests, faults), seed=_seed(session.config))
    Path(path).write_text(json.dumps(found, indent=1))
