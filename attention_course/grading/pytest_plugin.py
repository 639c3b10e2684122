"""The pytest plugin of a course's graders: runs the declared calls of the collected grader files
in one worker and reports points. A course's grader_tests/conftest.py imports it.

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
"""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path

import pytest

from attention_course.course import Course
from attention_course.grading import harness
from attention_course.grading.seeds import check_seed
from attention_course.grading.session import Session, record, report
from attention_course.sandbox.program import Limits, run_program, submission_deadline

_RESULTS = pytest.StashKey[list]()  # one dict per grader test run
_FAULTS = pytest.StashKey[list]()  # what went wrong in the graders themselves
_SESSION = pytest.StashKey[Session]()  # the submission's grading session


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


def pytest_configure(config: pytest.Config) -> None:
    """The submission's seed, set before the grader files are imported (they draw at import)."""
    seed = config.getoption("--seed", None)
    harness.set_seed(check_seed(seed) if seed else None)


def _course(config: pytest.Config) -> Course:
    return Course.load(config.getoption("--course") or config.rootpath)


def _session(config: pytest.Config) -> Session:
    if _SESSION not in config.stash:
        from attention_course.grading.notebook import program_from_file

        course = _course(config)
        path = config.getoption("--submission")
        hide = [*course.hidden(), *map(Path, config.getoption("--hide"))]
        unsandboxed = config.getoption("--unsandboxed")
        limits = Limits()
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

        program = program_from_file(Path(path) if path else course.reference_file)
        calls = list(harness.REGISTRY.values())
        config.stash[_SESSION] = Session(program, calls, run, course)
    return config.stash[_SESSION]


@pytest.fixture(scope="session")
def program_run(request: pytest.FixtureRequest):
    return _session(request.config).program_run


@pytest.fixture(scope="session")
def student(program_run, request: pytest.FixtureRequest) -> harness.Student:
    return _session(request.config).student


@pytest.fixture
def passed_only_with_course(request: pytest.FixtureRequest) -> list[str]:
    """Descriptions of the tests of this file's function that passed only with the course's
    helpers (so far: the 0-point test that reads this comes last in its file)."""
    return _session(request.config).passed_only_with_course.get(_function(request.node), [])


@pytest.fixture
def passed_only_with_callees(request: pytest.FixtureRequest) -> dict[str, list[str]]:
    """Graded callee -> descriptions of the tests of this file's function that passed only
    with the course's callee (so far: the 0-point test that reads this comes last in its
    file)."""
    return _session(request.config).passed_only_with_callees.get(_function(request.node), {})


def _points(item: pytest.Item) -> float:
    """A grader test's points: its `@points(n)` (harness.points_of), else a `points` marker."""
    try:
        return harness.points_of(getattr(item, "obj", None))
    except LookupError:
        marker = item.get_closest_marker("points")
    if marker is None:
        raise pytest.UsageError(f"{item.nodeid} has no points marker")
    return float(marker.args[0])


def _function(item: pytest.Item) -> str:
    name = Path(str(item.fspath)).stem
    return name.removeprefix("test_")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items) -> None:
    here = _course(config).grader_dir.resolve()
    for item in items:
        if Path(str(item.fspath)).parent == here:
            _points(item)  # every grader test carries its points


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """Grader tests run through the session (a helper's bug is not the function's)."""
    if "student" not in pyfuncitem.funcargs:
        return None
    names = inspect.signature(pyfuncitem.obj).parameters
    args = {name: pyfuncitem.funcargs[name] for name in names}
    _session(pyfuncitem.config).call(pyfuncitem.obj, _function(pyfuncitem), args)
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A grader test's result for the report. Only the grader's own `Fail` is a student
    outcome; anything else it raises (a grader bug, a worker that could not start), and a
    failed clean-up after it, is a fault of grading, reported as such and never turned into
    points or a zero."""
    outcome = yield
    if outcome.when == "teardown" and outcome.failed and call.excinfo is not None:
        exc = call.excinfo.value  # the test's result stands, but grading did not end cleanly
        text = str(exc).strip().splitlines()
        fault = f"{item.nodeid}: teardown: {type(exc).__name__}: {text[0] if text else ''}"
        item.config.stash.setdefault(_FAULTS, []).append(fault[:500])
    if outcome.when == "call" or (outcome.when == "setup" and outcome.failed):
        message = ""
        if outcome.failed and call.excinfo is not None:
            exc = call.excinfo.value
            if isinstance(exc, harness.Fail):
                message = str(exc)
            else:
                text = str(exc).strip().splitlines()
                fault = f"{item.nodeid}: {type(exc).__name__}: {text[0] if text else ''}"
                item.config.stash.setdefault(_FAULTS, []).append(fault[:500])
        results = item.config.stash.setdefault(_RESULTS, [])
        function = _function(item)
        assert isinstance(item, pytest.Function)  # a grader test is a test function
        results.append(
            record(function, item.name, item.obj, _points(item), outcome.passed, message)
        )
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
    faults = _session_faults + session.config.stash.get(_FAULTS, [])
    if exitstatus not in (0, 1):
        faults.append(f"pytest ended with exit status {int(exitstatus)}")
    graded = session.config.stash.get(_SESSION, None)
    tests = session.config.stash.get(_RESULTS, [])
    found = dict(report(graded, tests, faults), seed=session.config.getoption("--seed"))
    Path(path).write_text(json.dumps(found, indent=1))
