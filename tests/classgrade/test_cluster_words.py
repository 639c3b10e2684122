"""What a Dask run says when a task failed or its scheduler went away (classgrade/cluster.py):
one line each, in words, with the cause Dask gave and not its plumbing. The runs themselves are
in test_cluster_grading.py (a killed worker, a lost scheduler); these are the words."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import CancelledError

import pytest
from distributed import KilledWorker

from attention_course.classgrade import cluster

AFTER = "(what was graded is kept; with the scheduler back, the same command grades the rest)"


def test_a_task_whose_workers_kept_dying_and_one_that_failed_are_errors_saying_why():
    died = cluster._outcome_of_failure("s1", KilledWorker("grade-s1", "tcp://w:1", 3))
    assert (died.student, died.status) == ("s1", "error")
    assert died.reason == "the Dask workers grading it died, again and again"
    failed = cluster._outcome_of_failure("s2", RuntimeError("no\n  room  on\tdevice"))
    assert (failed.status, failed.reason) == ("error", "its Dask task failed: no room on device")
    long = cluster._outcome_of_failure("s3", ValueError("x" * 400))
    assert long.reason == "its Dask task failed: " + "x" * 300
    assert cluster._outcome_of_failure("s4", ValueError()).reason == (
        "its Dask task failed: ValueError"
    )


def test_a_lost_scheduler_is_one_line_with_the_cause_dask_gave():
    address = "tcp://10.0.0.5:8786"
    broke = cluster._lost_words(address, CancelledError())
    assert broke == f"lost the Dask scheduler at {address}: the connection to it broke {AFTER}"
    reset = OSError("in <TCP (closed) Scheduler connection to 10.0.0.5:8786>: ConnectionResetError")
    assert cluster._lost_words(address, reset) == (
        f"lost the Dask scheduler at {address}: ConnectionResetError {AFTER}"
    )
    said = cluster._lost_words(address, TimeoutError("timed out\nafter 30 s"))
    assert said == f"lost the Dask scheduler at {address}: timed out after 30 s {AFTER}"


def test_a_scheduler_that_cannot_be_reached_is_said_with_its_address():
    """An address (here with no tcp://) is a scheduler to reach, never a cluster to start."""
    # distributed imported first: its defaults are in dask.config before the set below (a
    # set made before them takes them out again as it ends, for every later test here)
    import dask
    import distributed  # noqa: F401

    from attention_course.classgrade.nbgrader_api import CourseError

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        with pytest.raises(CourseError, match=r"^cannot reach the Dask scheduler at 127.0.0.1:1: "):
            cluster.connect("127.0.0.1:1", 1)


def test_a_worker_imports_the_gradebook_drivers_as_it_starts():
    """cluster.dask_setup (run by every worker that preloads the module, as the engine's
    workers do) imports what a first task would otherwise import as it grades."""
    seen = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from attention_course.classgrade import cluster\n"
            "drivers = ('psycopg', 'sqlalchemy.orm', 'sqlalchemy.dialects.postgresql')\n"
            "before = [name in sys.modules for name in drivers]\n"
            "cluster.dask_setup(None)\n"
            "print(before, [name in sys.modules for name in drivers])",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert seen.stdout == "[False, False, False] [True, True, True]\n", seen.stderr
