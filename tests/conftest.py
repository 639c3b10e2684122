"""Shared fixtures: a throw-away copy of the course, graded once per test run (however many
xdist workers share it: tests/shared.py); a check that no test wrote into the repository; the
xdist groups, which keep the modules that share a process's servers or state in one worker
(pytest_xdist_make_scheduler); and, under CI, a skipped test fails (tests/skips.py)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import pytest

from attention_course.grading.graders import GradeReport, grade_file
from attention_course.settings import GRADING_KEY_ENV
from tests import shared
from tests.course import ALL_ASSIGNMENTS, COURSE_ROOT, REFERENCE_FILE
from tests.skips import pytest_runtest_makereport  # noqa: F401 (under CI a skip fails)

# The grading key of every grading the tests start (else grading in this repository would make
# its key file, .grading/grading.key, here): the graders' inputs are then this key's, per
# submission, as a class's are its own course's key's.
TEST_GRADING_KEY = "5eed" * 8
os.environ.setdefault(GRADING_KEY_ENV, TEST_GRADING_KEY)

# Modules that must run in one process (one xdist worker), group name -> patterns of their file
# names (a pattern with folders matches that many trailing parts of the path). Every other
# module is a group of its own, so that a module's fixtures are made once, in one worker.
GROUPS = {
    # the browser tests in two units, each with a Chromium of its own (tests/browser/conftest.py):
    # the graded class's pages in the instructor's JupyterLab, and the student's JupyterLab
    "browser-graded": ("browser/test_feedback.py", "browser/test_instructor.py"),
    "browser-student": (
        "browser/test_student.py",
        "browser/test_quiz_widgets.py",
        "browser/test_similarity_report.py",
    ),
    # one JupyterHub of the course for all of them (tests/deploy/conftest.py's course_hub);
    # the other deploy modules are groups of their own, sharing the run's one venv of the
    # engine's wheel (tests/deploy/conftest.py, tests/shared.py)
    "deploy-hub": (
        "deploy/test_jupyterhub.py",
        "deploy/test_hub_check.py",
        "deploy/test_check_button.py",
    ),
}


# The units of work that take longest, longest first: they start before everything else, so
# that no long chain of tests starts last (xdist would otherwise start the groups with most
# tests first).
LONGEST = (
    "test_gradebook_faults.py",
    "test_lti_hub.py",
    "deploy-hub",
    "browser-graded",
    "browser-student",
    "test_run_graders.py",
    "test_cluster_grading.py",
    "test_postgres_gradebook.py",
    "test_catalogue.py",
    "test_class_grading.py",
    "test_visible_checks.py",
    "test_grading_faults.py",
    "test_another_course.py",
)

# The units that mostly wait rather than compute: on servers starting, a browser, faults that
# last seconds of real time (a stalled gradebook, a killed run), endless loops run to their
# limits. Two workers take the other units first, so that two keep the two cores busy while the
# rest (TEST_PROCESSES beyond two, scripts/test.sh) take these first and wait side by side; a
# worker whose own kind is done takes the other kind, longest first.
WAITING = (
    "test_gradebook_faults.py",
    "test_lti_hub.py",
    "deploy-hub",
    "browser-graded",
    "browser-student",
    "test_cluster_grading.py",
    "test_postgres_gradebook.py",
    "test_class_grading.py",
    "test_autograde.py",
    "test_cluster_tasks.py",
    "test_unprivileged.py",
)
BUSY_WORKERS = 2


# Modules whose tests are each a unit of their own, so that several workers share their long
# chain: each test's fixtures are its own or made again where the test runs (a module's server).
SPLIT = ("classgrade/test_gradebook_faults.py",)


def _named(scope: str, name: str) -> bool:
    """Whether a unit of work (a group, a module, or a test of a SPLIT module) is `name`."""
    scope = scope.split("::", 1)[0]
    return scope == name or scope.endswith("/" + name)


def _rank(scope: str) -> int:
    return next((r for r, name in enumerate(LONGEST) if _named(scope, name)), len(LONGEST))


def _waits(scope: str) -> bool:
    return any(_named(scope, name) for name in WAITING)


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its module's group, or the test itself in SPLIT."""
    module = nodeid.split("::", 1)[0]
    if any(module == name or module.endswith("/" + name) for name in SPLIT):
        return nodeid
    return group_of(module)


def group_of(module: str) -> str:
    """The group of a test module (its path relative to the rootdir)."""
    parts = Path(module).parts
    for name, patterns in GROUPS.items():
        for pattern in patterns:
            if fnmatch("/".join(parts[-(pattern.count("/") + 1) :]), pattern):
                return name
    return module


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: unknown where xdist is not loaded
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's scheduler by scope, the scope of a test being its module's group. (xdist's own
    --dist loadgroup reads the groups from node ids that pytest 9 no longer lets it rename.)"""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the first time: the whole queue is there
                self.ordered = True
                queue = sorted(self.workqueue.items(), key=lambda unit: _rank(unit[0]))
                self.workqueue.clear()
                self.workqueue.update(queue)
            waiting_first = self.nodes.index(node) < len(self.nodes) - BUSY_WORKERS
            for scope in self.workqueue:  # the first unit of this worker's kind, if any is left
                if _waits(scope) == waiting_first:
                    self.workqueue.move_to_end(scope, last=False)
                    break
            super()._assign_work_unit(node)

    return GroupScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    shared.configure(config)


def pytest_sessionfinish(session: pytest.Session) -> None:
    shared.finish()  # the whole run is over (in the controller; workers do nothing)


def grade_reference_variants(
    folder: Path, variants: dict[str, tuple[str, list[str] | None, str]], in_process: bool = True
) -> dict[str, GradeReport]:
    """Grade each variant, key -> (assignment, functions or None for all, code): the program is
    the reference followed by `code`, whose definitions override the reference's. Two at a
    time (the graders in this process, without pytest, unless `in_process` is False: see
    test_run_graders.py)."""
    reference = REFERENCE_FILE.read_text()

    def grade(key: str) -> tuple[str, GradeReport]:
        assignment, functions, code = variants[key]
        path = folder / (key.replace("/", "__") + ".py")
        path.write_text(reference + "\n\n# ---- variant ----\n\n" + code)
        return key, grade_file(path, assignment, functions=functions, in_process=in_process)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(grade, variants))


@dataclass
class Demo:
    """`attention-course demo` as a new user runs it: what it printed, its course folder, and
    the repository before and after."""

    proc: subprocess.CompletedProcess
    root: Path
    before: dict
    after: dict


@pytest.fixture(scope="session")
def demo_run() -> Demo:
    """The demo, run once for the whole run (whichever worker asks first); its folder is
    removed when the whole run is over."""
    return shared.once("demo_run", _run_demo)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The first xdist workers start the run's costliest shared values (the demo's graded
    class; the engine's wheel installed in a fresh venv) as soon as the run's tests are known,
    if one of them needs it, beside the tests they run: whichever test asks first then finds it
    done or under way, rather than making it late in a long chain of tests (the browser's, the
    hub's)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if session.config.option.collectonly:
        return
    for name, make in (("demo_run", _demo_beforehand), ("engine_venv", _venv_beforehand)):
        if worker == BEFOREHAND[name] and any(
            name in getattr(item, "fixturenames", ()) for item in session.items
        ):
            threading.Thread(target=make, name=name, daemon=True).start()


BEFOREHAND = {"demo_run": "gw0", "engine_venv": "gw1"}  # which worker starts each


def _demo_beforehand() -> None:
    with contextlib.suppress(BaseException):  # (a failure is stored: the fixture says it)
        shared.once("demo_run", _run_demo)


def _venv_beforehand() -> None:
    from tests.deploy import conftest as deploy

    with contextlib.suppress(BaseException):  # (a failure is stored: the fixture says it)
        python = deploy.python_for_everybody()
        if python is not None:
            wheel = shared.once("engine_wheel", deploy.build_wheel)
            shared.once("engine_venv", lambda: deploy.make_venv(python, wheel))


def _run_demo() -> Demo:
    before = repository_files()
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "attention-course"), "demo"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = re.search(r"own course folder .*?: (\S+)", proc.stdout)
    assert found, proc.stdout[-3000:]
    root = Path(found.group(1))
    shared.at_end(root.parent)
    return Demo(proc, root, before, repository_files())


@pytest.fixture(scope="session")
def graded_class(demo_run):
    """Every sample student of every assignment, autograded by nbgrader: the demo's class.

    Returns (root, {assignment: ClassRun}), the runs read back from what `autograde` recorded
    of each submission (.grading/).
    """
    from attention_course.classgrade.run import STATE_DIR, ClassRun, Outcome

    runs = {}
    for assignment in ALL_ASSIGNMENTS:
        outcomes = {}
        for path in sorted((demo_run.root / STATE_DIR / assignment).glob("*.json")):
            record = json.loads(path.read_text())
            record.pop("fingerprint")
            outcomes[path.stem] = Outcome(**record)
        runs[assignment] = ClassRun(assignment, outcomes)
    return demo_run.root, runs


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL server for the session (tests/pgserver.py); `new_database()`
    gives the URL of an empty database."""
    from tests.pgserver import PostgresServer

    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def dask_cluster():
    """A Dask LocalCluster of two worker processes (one thread each), as `--scheduler local`
    makes it (cluster.local_cluster), and a client of it, for the session. Yields the client;
    each test gets both workers back (one may have been killed by an earlier test and
    restarted by its nanny)."""
    import logging

    from distributed import Client

    from attention_course.classgrade.cluster import local_cluster

    cluster = local_cluster(2, silence_logs=logging.CRITICAL)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture
def dask_client(dask_cluster):
    from tests.processes import wait_for_dask_workers

    wait_for_dask_workers(dask_cluster, 2, "the session's LocalCluster of two workers")
    return dask_cluster


CACHES = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}


def repository_files(root: Path = COURSE_ROOT) -> dict[str, tuple[int, int]]:
    """Every file of the repository but caches and the virtual environment: (size, mtime)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in CACHES and not d.endswith(".egg-info")]
        for name in files:
            stat = os.lstat(os.path.join(folder, name))
            found[os.path.relpath(os.path.join(folder, name), root)] = (
                stat.st_size,
                stat.st_mtime_ns,
            )
    return found


@pytest.fixture(scope="session", autouse=True)
def repository_untouched():
    """Tests work in course copies and temporary folders: whatever the machine lacks, the run
    ends with the repository's files as they were (an error at the end of the run says which)."""
    before = repository_files()
    yield
    after = repository_files()
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    assert not changed, f"the tests wrote into the repository: {changed[:10]}"
