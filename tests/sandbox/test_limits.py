"""The limits fit together: an endless loop costs only its own function, and a hang of the test
suite itself is a failure, not a run that never ends."""

from __future__ import annotations

import subprocess
import sys

from attention_course.settings import DEFAULT
from tests.course import ASSIGNMENTS

# The most graded functions one submission has, each of which may loop forever.
FUNCTIONS = max(len(a.graded) for a in ASSIGNMENTS.values())


def test_every_function_can_time_out_and_still_be_judged_alone():
    """A submission in which every graded function loops forever still has each one stopped
    and judged on its own, none skipped for want of time: one worker outlasts a timeout of
    every function, a fresh worker after each loop that ignores its alarm is allowed, and
    the submission's time covers all of them twice (the functions that call pasted helpers
    are graded again with the course's helpers)."""
    assert FUNCTIONS * DEFAULT.call_timeout <= DEFAULT.worker_timeout
    assert DEFAULT.max_restarts >= FUNCTIONS
    assert 2 * FUNCTIONS * (DEFAULT.call_timeout + DEFAULT.grace) <= DEFAULT.submission_timeout
    notebook = DEFAULT.backstop(DEFAULT.notebook_timeout)  # the notebook run's absolute limit
    assert DEFAULT.submission_timeout + notebook < DEFAULT.grading_timeout


def test_a_hang_fails_the_run(tmp_path, pytestconfig):
    """pytest-timeout is on for the whole suite, and a test that hangs ends the run as failed."""
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert 0 < float(pytestconfig.getini("timeout")) <= 900
    method = pytestconfig.getini("timeout_method")
    (tmp_path / "pytest.ini").write_text(f"[pytest]\ntimeout = 1\ntimeout_method = {method}\n")
    (tmp_path / "test_hang.py").write_text(
        "import time\n\n\ndef test_hang():\n    time.sleep(120)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode not in (0, 5)
    assert "Timeout" in proc.stdout + proc.stderr
