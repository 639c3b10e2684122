"""Runs the declared calls of the collected grader files in one worker and reports points.

Options (see `pytest grader_tests --help`):
  --submission PATH   a filled-in notebook (.ipynb) or a Python file; default: the reference
  --report PATH       write a JSON report (per test: function, points, passed, message)
  --unsandboxed       run the student's worker without the sandbox (limits only)
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from attention_course.assignments import ASSIGNMENTS, COURSE_ROOT, REFERENCE_FILE
from attention_course.sandbox import Limits, run_program
from grader_tests import harness

_RESULTS = pytest.StashKey[list]()  # one dict per grader test run
_FAULTS = pytest.StashKey[list]()  # what went wrong in the graders themselves
_RUN = pytest.StashKey[object]()  # the ProgramRun of the submission


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("attention-course graders")
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


def _program(config: pytest.Config) -> list[tuple[str, str]]:
    from attention_course.notebook import program_from_file

    path = config.getoption("--submission")
    return program_from_file(Path(path) if path else REFERENCE_FILE)


def _run(config: pytest.Config, cells: list[tuple[str, str]], calls: list):
    hide = [COURSE_ROOT, *map(Path, config.getoption("--hide"))]
    unsandboxed = config.getoption("--unsandboxed")
    return run_program(cells, calls, Limits(), hide=hide, unsandboxed=unsandboxed)


@pytest.fixture(scope="session")
def program_run(request: pytest.FixtureRequest):
    config = request.config
    run = _run(config, _program(config), list(harness.REGISTRY.values()))
    config.stash[_RUN] = run
    return run


@pytest.fixture(scope="session")
def student(program_run) -> harness.Student:
    return harness.Student(program_run.outcomes)


def _points(item: pytest.Item) -> float:
    marker = item.get_closest_marker("points")
    if marker is None:
        raise pytest.UsageError(f"{item.nodeid} has no points marker")
    return float(marker.args[0])


def _function(item: pytest.Item) -> str:
    name = Path(str(item.fspath)).stem
    return name.removeprefix("test_")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            _points(item)  # every grader test carries its points


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A grader test's result for the report. Only the grader's own `Fail` is a student
    outcome; anything else it raises (a grader bug, a worker that could not start) is a fault
    of grading, reported as such and never turned into points or a zero."""
    report = yield
    if report.when == "call" or (report.when == "setup" and report.failed):
        message = ""
        if report.failed and call.excinfo is not None:
            exc = call.excinfo.value
            if isinstance(exc, harness.Fail):
                message = str(exc)
            else:
                text = str(exc).strip().splitlines()
                fault = f"{item.nodeid}: {type(exc).__name__}: {text[0] if text else ''}"
                item.config.stash.setdefault(_FAULTS, []).append(fault[:500])
        results = item.config.stash.setdefault(_RESULTS, [])
        results.append(
            {
                "function": _function(item),
                "test": item.name,
                "description": (item.obj.__doc__ or item.name).strip().splitlines()[0],
                "points": _points(item),
                "passed": report.passed,
                "message": message,
            }
        )
    return report


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
    run = session.config.stash.get(_RUN, None)
    faults = _session_faults + session.config.stash.get(_FAULTS, [])
    if exitstatus not in (0, 1):
        faults.append(f"pytest ended with exit status {int(exitstatus)}")
    report = {
        "faults": faults,
        "tests": session.config.stash.get(_RESULTS, []),
        "cell_errors": [vars(c) for c in run.cell_errors] if run else [],
        "notes": run.notes if run else [],
        "workers": run.workers if run else 0,
    }
    Path(path).write_text(json.dumps(report, indent=1))


# --------------------------------------------------------------------------- pasted helpers
# masks_and_heads' functions call helpers the student pastes from attention_basics. A test of
# such a function that fails is run again on a second program: the student's cells followed by
# the course's helpers (see pasted_helpers.py). If it passes there, the function itself is right:
# the test counts as passed, and the file's 0-point test names the helper. Only pass or fail
# comes from the second program, never a message, so nothing of the course's helpers reaches
# the student.

_WITH_COURSE_HELPERS = pytest.StashKey[harness.Student]()
_PASSED_ONLY_WITH_COURSE = pytest.StashKey[dict]()  # function -> descriptions of tests


def _pasted_helpers(item: pytest.Item) -> tuple[str, ...]:
    function = _function(item)
    return next((a.helpers for a in ASSIGNMENTS.values() if function in a.graded), ())


def _with_course_helpers(config: pytest.Config, helpers: tuple[str, ...]) -> harness.Student:
    if _WITH_COURSE_HELPERS not in config.stash:
        from grader_tests import reference

        source = "import numpy as np\n\n" + "\n\n".join(
            inspect.getsource(getattr(reference, h)) for h in helpers
        )
        calls = [c for c in harness.REGISTRY.values() if c.function not in helpers]
        run = _run(config, [*_program(config), ("course_helpers", source)], calls)
        config.stash[_WITH_COURSE_HELPERS] = harness.Student(run.outcomes)
    return config.stash[_WITH_COURSE_HELPERS]


@pytest.fixture
def passed_only_with_course(request: pytest.FixtureRequest) -> list[str]:
    """Descriptions of the tests of this file's function that passed only with the course's
    helpers (so far: the 0-point test that reads this comes last in its file)."""
    found = request.config.stash.setdefault(_PASSED_ONLY_WITH_COURSE, {})
    return found.get(_function(request.node), [])


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    helpers = _pasted_helpers(pyfuncitem)
    if not helpers or "student" not in pyfuncitem.funcargs:
        return None
    names = inspect.signature(pyfuncitem.obj).parameters
    if "passed_only_with_course" in names:  # the 0-point test that names the helper
        return None
    args = {name: pyfuncitem.funcargs[name] for name in names}
    try:
        pyfuncitem.obj(**args)
    except harness.Fail:
        args["student"] = _with_course_helpers(pyfuncitem.config, helpers)
        try:
            pyfuncitem.obj(**args)
        except harness.Fail:
            pass
        else:
            found = pyfuncitem.config.stash.setdefault(_PASSED_ONLY_WITH_COURSE, {})
            description = (pyfuncitem.obj.__doc__ or pyfuncitem.name).strip().splitlines()[0]
            found.setdefault(_function(pyfuncitem), []).append(description)
            return True
        raise  # the failure with the student's own helpers: its message, not the second run's
    return True
