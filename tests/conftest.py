"""Shared fixtures: a throw-away copy of the course, graded once per test session."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from attention_course.assignments import ALL_ASSIGNMENTS, COURSE_ROOT, REFERENCE_FILE
from attention_course.grading import GradeReport, grade_file


def grade_reference_variants(
    folder: Path, variants: dict[str, tuple[str, list[str] | None, str]]
) -> dict[str, GradeReport]:
    """Grade each variant, key -> (assignment, functions or None for all, code): the program is
    the reference followed by `code`, whose definitions override the reference's. Two at a
    time (the graders in this process, without pytest: see test_run_graders.py)."""
    reference = REFERENCE_FILE.read_text()

    def grade(key: str) -> tuple[str, GradeReport]:
        assignment, functions, code = variants[key]
        path = folder / (key.replace("/", "__") + ".py")
        path.write_text(reference + "\n\n# ---- variant ----\n\n" + code)
        return key, grade_file(path, assignment, functions=functions, in_process=True)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(grade, variants))


SKIP_IN_SNAPSHOT = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache"}


def repository_snapshot(root: Path = COURSE_ROOT) -> dict[str, tuple[int, int]]:
    """Every file of the repository (but the environment and caches): size and mtime."""
    found = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if SKIP_IN_SNAPSHOT & set(rel.parts) or any(p.endswith(".egg-info") for p in rel.parts):
            continue
        if path.is_file():
            stat = path.stat()
            found[str(rel)] = (stat.st_size, stat.st_mtime_ns)
    return found


@dataclass
class Demo:
    """`attention-course demo` as a new user runs it: what it printed, its course folder, and
    the repository before and after."""

    proc: subprocess.CompletedProcess
    root: Path
    before: dict
    after: dict


@pytest.fixture(scope="session")
def demo_run():
    before = repository_snapshot()
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
    yield Demo(proc, root, before, repository_snapshot())
    shutil.rmtree(root.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def graded_class(demo_run):
    """Every sample student of every assignment, autograded by nbgrader: the demo's class.

    Returns (root, {assignment: ClassRun}), the runs read back from what `autograde` recorded
    of each submission (.grading/).
    """
    from attention_course.classgrade import STATE_DIR, ClassRun, Outcome

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
    """A Dask LocalCluster of two worker processes (one thread each) and a client of it, for
    the session. Yields the client; each test gets both workers back (one may have been
    killed by an earlier test and restarted by its nanny)."""
    import logging

    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.CRITICAL,
    )
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture
def dask_client(dask_cluster):
    dask_cluster.wait_for_workers(2, timeout=120)
    return dask_cluster
