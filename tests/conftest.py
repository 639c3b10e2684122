"""Shared fixtures: a throw-away copy of the course, graded once per test session."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from attention_course.assignments import REFERENCE_FILE
from attention_course.course import copy_course
from attention_course.grading import GradeReport, grade_file


def grade_reference_variants(
    folder: Path, variants: dict[str, tuple[str, list[str] | None, str]]
) -> dict[str, GradeReport]:
    """Grade each variant, key -> (assignment, functions or None for all, code): the program is
    the reference followed by `code`, whose definitions override the reference's. Two at a
    time (one pytest process and one worker each)."""
    reference = REFERENCE_FILE.read_text()

    def grade(key: str) -> tuple[str, GradeReport]:
        assignment, functions, code = variants[key]
        path = folder / (key.replace("/", "__") + ".py")
        path.write_text(reference + "\n\n# ---- variant ----\n\n" + code)
        return key, grade_file(path, assignment, functions=functions)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(grade, variants))


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory):
    """Every sample student of every assignment, autograded by nbgrader in a course copy.

    Returns (root, {assignment: the ClassRun of `autograde_class`}).
    """
    from attention_course.course import release
    from attention_course.demo import grade_sample_class

    root = copy_course(tmp_path_factory.mktemp("course"))
    release(root=root)  # records the assignments in the copy's gradebook
    return root, grade_sample_class(root)


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
