"""The hub-check commands' bad input: one line, a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

from attention_course.settings import CHECK_URL_ENV
from tests.course import COURSE_ROOT
from tests.processes import free_port


def run(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v for k, v in os.environ.items() if k not in (CHECK_URL_ENV, "JUPYTERHUB_API_TOKEN")
    }
    return subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", *args],
        capture_output=True,
        text=True,
        env=dict(clean, **env),
    )


def one_line(proc: subprocess.CompletedProcess, code: int, said: str) -> None:
    assert proc.returncode == code, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert said in proc.stderr, proc.stderr


def test_hub_check_outside_a_hub_says_what_is_missing(tmp_path):
    notebook = COURSE_ROOT / "release" / "attention_basics" / "attention_basics.ipynb"
    one_line(run("hub-check", str(notebook)), 1, f"${CHECK_URL_ENV} is not set")
    one_line(
        run("hub-check", str(notebook), "--url", "http://127.0.0.1:1/"),
        1,
        "$JUPYTERHUB_API_TOKEN is not set",
    )
    closed = f"http://127.0.0.1:{free_port()}/services/course-check/"
    proc = run("hub-check", str(notebook), "--url", closed, JUPYTERHUB_API_TOKEN="x")
    one_line(proc, 1, "does not answer")
    one_line(run("hub-check", str(tmp_path / "missing.ipynb")), 2, "cannot be read")


def test_bad_service_options_are_one_line(tmp_path):
    one_line(run("hub-check-service", "--after-due", "never"), 2, "invalid choice")
    one_line(run("hub-check-service", "--per-day", "0"), 2, "not 1 or more")
    one_line(run("hub-checks", "--course", str(tmp_path)), 2, "not a course folder")


def test_hub_check_exits_non_zero_unless_the_check_was_graded(tmp_path, monkeypatch, capsys):
    """The check's answer decides the exit code, whatever the feedback says: graded, 0;
    failed by grading, rejected, or not answered in time, 1 (a script that checks before
    submitting must not take a check that never ran for a pass)."""
    from attention_course.cli.main import main
    from attention_course.integrations import check_client

    notebook = COURSE_ROOT / "release" / "attention_basics" / "attention_basics.ipynb"
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "x")
    codes = {}
    for state in ("graded", "failed", "rejected", "running"):
        record = {"id": "c1", "state": state, "assignment": "attention_basics"}
        record["feedback"] = "attention_basics: 35 / 35 points\n"  # the same words every time
        answer = {"check": record, "checks_left": 1}
        monkeypatch.setattr(check_client, "check", lambda *a, answer=answer, **k: answer)
        codes[state] = main(["hub-check", str(notebook), "--url", "http://127.0.0.1:9/"])
    capsys.readouterr()
    assert codes == {"graded": 0, "failed": 1, "rejected": 1, "running": 1}
