"""`attention-course jupyterhub` can be run again: an environment it made and did not finish
(a failure, a kill), or made with another --python, is made again, one it did not make is never
removed; the hub's proxy is copied into the environment, so the hub needs nothing of the
checkout the command ran from. The whole command killed mid-build and run again is the long
test at the end."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attention_course.integrations import jupyterhub as hub
from tests.course import COURSE_ROOT

PROXY = COURSE_ROOT / ".venv" / "node_tools" / "node_modules" / ".bin" / hub.PROXY_PACKAGE


def made(venv: Path, python: str, complete: bool) -> None:
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    made = {"python": python, "complete": complete}
    (venv / hub.MADE_FILE).write_text(json.dumps(made))


def test_what_an_earlier_run_left_is_made_again_only_when_it_is_ours(tmp_path):
    python = str(Path(sys.executable).absolute())
    unfinished = tmp_path / "unfinished"
    made(unfinished, python, complete=False)
    assert hub._stale(unfinished, None) == "an earlier run did not finish it"
    finished = tmp_path / "finished"
    made(finished, python, complete=True)
    assert hub._stale(finished, None) == hub._stale(finished, python) == ""
    assert hub._stale(finished, "/usr/bin/python3") == (
        f"it was made with {python}, not /usr/bin/python3"
    )
    theirs = tmp_path / "theirs"  # a venv the command did not make: used, never removed
    (theirs / "bin").mkdir(parents=True)
    assert hub._stale(theirs, "/usr/bin/python3") == hub._stale(tmp_path / "none", None) == ""


@pytest.mark.skipif(not PROXY.exists(), reason="scripts/setup.sh installs the proxy")
def test_the_proxy_is_copied_into_the_environment_and_runs_from_there(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    program = hub.install_proxy(hub.which_proxy(str(PROXY)), venv)
    assert Path(program).is_relative_to(venv / hub.PROXY_FOLDER) and Path(program).is_file()
    ran = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout.strip()[0].isdigit(), ran.stderr
    assert hub.install_proxy("/usr/bin/true", venv) == "/usr/bin/true"  # not an npm package's


@pytest.mark.long
def test_a_failed_then_killed_build_run_again_with_other_options_succeeds():
    """As an instructor meets it: the first run (the default interpreter, in root's private
    home here) stops with "run the command again with --python"; the second, with --python,
    is killed while pip installs; the third, with the same --python, succeeds."""
    from attention_course.errors import UserError
    from attention_course.integrations.wheel import build_wheel
    from tests.deploy.conftest import python_for_everybody, shared_folder

    python = python_for_everybody()
    if python is None:
        pytest.skip("no Python >= 3.11 with venv that every account can run")
    base = shared_folder("attention-hub-rerun-")
    venv = base / "venv"
    try:
        default = Path(getattr(sys, "_base_executable", sys.executable))
        if "/root/" in str(default.resolve()):  # what the issue met: pyenv in root's home
            with pytest.raises(UserError, match="run the command again with --python"):
                hub.install_environment(venv)
            assert json.loads((venv / hub.MADE_FILE).read_text())["complete"] is False
        code = "import sys; from pathlib import Path; from attention_course.integrations "
        code += "import jupyterhub as h; h.install_environment(Path(sys.argv[1]), sys.argv[2])"
        started = subprocess.Popen(
            [sys.executable, "-c", code, str(venv), python], start_new_session=True
        )
        deadline = time.monotonic() + 300
        while not (venv / "bin" / "pip").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(3)  # pip at work
        os.killpg(started.pid, signal.SIGKILL)
        started.wait()
        assert json.loads((venv / hub.MADE_FILE).read_text())["complete"] is False
        hub.install_environment(venv, python)
        assert json.loads((venv / hub.MADE_FILE).read_text())["complete"] is True
        assert hub.installed_already(venv, build_wheel(base / "wheel"))
        assert (venv / "bin" / "jupyterhub").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
