"""The students' JupyterLab as a course deploys it (README, Students' JupyterLab): root writes the
configuration with `attention-course student-config` into a folder students cannot write, and
an ordinary student account starts the installed `jupyter lab` with JUPYTER_CONFIG_PATH set to
it, twice. Each time: a workspace is saved and read back (into the student's own ~/.jupyter),
the instructor tools are off, the Validate answer's extension is loaded, nbgrader finds the
course's exchange; and neither server's log holds an error.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import stat
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.course import COURSE_ROOT
from tests.deploy.conftest import clean_env, shared_folder
from tests.integrations.test_student_config import INSTRUCTORS
from tests.processes import free_port, stop_process

COURSE_ID = "attention-course-deploy"
ASSIGNMENT = "attention_basics"
START_TIMEOUT = 120  # seconds for JupyterLab to answer (2 cores, a cold start)
# How students are told to point Jupyter at the folder (README). The old design, which made
# the folder their JUPYTER_CONFIG_DIR, fails this test.
CONFIG_VARIABLE = "JUPYTER_CONFIG_PATH"
# A log line of an error: Jupyter's "[E 12:00:00.000 ServerApp]", Python logging's "ERROR".
ERROR_LINE = re.compile(r"^\[E[ \d]|\bERROR\b|Traceback|PermissionError", re.MULTILINE)
PAGE_CONFIG = re.compile(
    r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', re.DOTALL
)


@pytest.fixture
def deployment() -> tuple[Path, Path]:
    """A root-owned folder as /srv/course would be: (where the students' configuration goes,
    the exchange, writable by everybody, with the assignment released into it)."""
    srv = shared_folder("attention-srv-")
    try:
        exchange = srv / "exchange"
        exchange.mkdir()
        exchange.chmod(0o777)  # README: the exchange is shared and writable by everybody
        released = exchange / COURSE_ID / "outbound" / ASSIGNMENT
        released.mkdir(parents=True)
        shutil.copy(COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", released)
        for folder in (exchange / COURSE_ID, released.parent, released):
            folder.chmod(0o755)
        (released / f"{ASSIGNMENT}.ipynb").chmod(0o644)
        yield srv / "student-jupyter", exchange
    finally:
        shutil.rmtree(srv, ignore_errors=True)


class Lab:
    """A `jupyter lab` started as the student: its address, token and log."""

    def __init__(self, venv, account, config: Path, log: Path):
        self.port, self.token, self.log = free_port(), secrets.token_hex(16), log
        argv = [
            venv.command("jupyter"),
            "lab",
            "--no-browser",
            f"--port={self.port}",
            "--port-retries=0",
            f"--IdentityProvider.token={self.token}",  # ServerApp.token: deprecated
            "--ServerApp.ip=127.0.0.1",
        ]
        env = account.env(
            PATH=f"{venv.path / 'bin'}:/usr/bin:/bin", **{CONFIG_VARIABLE: str(config)}
        )
        with log.open("w") as out:
            self.process = account.popen(
                argv, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"jupyter lab exited ({self.process.returncode}):\n{self.log_text()}")
            try:
                if self.request("GET", "/api/status")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        self.stop()
        pytest.fail(f"jupyter lab did not answer in {START_TIMEOUT} s:\n{self.log_text()}")

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        """(status, body) of a request with the token; an HTTP error's status is returned."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        stop_process(self.process, timeout=30)


def _check_lab(lab: Lab, account, workspace: str) -> None:
    """What a student's JupyterLab must do: save a workspace and read it back, show no
    instructor tools, load the short Validate answer, list the course's released assignment."""
    body = {"data": {}, "metadata": {"id": workspace}}
    status, answer = lab.request("PUT", f"/lab/api/workspaces/{workspace}", body)
    assert status == 204, f"workspace save answered {status}: {answer[:500]!r}\n{lab.log_text()}"
    status, answer = lab.request("GET", f"/lab/api/workspaces/{workspace}")
    assert status == 200, f"workspace read answered {status}: {answer[:500]!r}"
    assert json.loads(answer)["metadata"]["id"] == workspace
    saved = account.home / ".jupyter" / "lab" / "workspaces"
    assert list(saved.glob("*.jupyterlab-workspace")), f"no workspace in {saved}"

    status, page = lab.request("GET", "/lab")
    assert status == 200
    page_config = json.loads(PAGE_CONFIG.search(page.decode()).group(1))
    assert INSTRUCTORS <= set(page_config["disabledExtensions"]), page_config  # typed there
    assert lab.request("GET", "/formgrader")[0] == 404  # formgrader's server extension is off

    status, answer = lab.request("GET", f"/assignments?course_id={COURSE_ID}")
    assert status == 200, answer[:500]
    listed = json.loads(answer)
    assert listed["success"], listed  # nbgrader found the exchange in nbgrader_config.json
    assert [a["assignment_id"] for a in listed["value"]] == [ASSIGNMENT], listed

    log = lab.log_text()
    assert (
        "attention_course.integrations.jupyter_validate | extension was successfully loaded" in log
    ), log
    assert "nbgrader.server_extensions.formgrader | extension was" not in log, log


def test_students_launch_jupyterlab_again_and_again_from_a_folder_they_cannot_write(
    engine_venv, account, deployment, tmp_path
):
    config, exchange = deployment
    wrote = subprocess.run(
        [engine_venv.command("attention-course"), "student-config", str(config)]
        + ["--course-id", COURSE_ID, "--exchange", str(exchange), "--course", str(COURSE_ROOT)],
        cwd=tmp_path,
        env=clean_env(),  # no PYTHONPATH, no Jupyter variables
        capture_output=True,
        text=True,
        umask=0o077,  # a careful root's: the folder must still be readable by students
    )
    assert wrote.returncode == 0, wrote.stderr
    assert f"{CONFIG_VARIABLE}={config} jupyter lab" in wrote.stdout, wrote.stdout
    files = [p for p in config.rglob("*") if p.is_file()]
    assert files
    for path in [config, *config.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert path.stat().st_uid == 0, path
        assert mode == (0o755 if path.is_dir() else 0o644), f"{path}: {mode:o}"
    cannot_write = account.run(["touch", config / "written-by-a-student"])
    assert cannot_write.returncode != 0, "the student could write the configuration folder"

    # what a student does first: fetch the assignment from the command line
    fetched = account.run(
        [engine_venv.command("nbgrader"), "fetch_assignment", ASSIGNMENT],
        env=account.env(
            PATH=f"{engine_venv.path / 'bin'}:/usr/bin:/bin", **{CONFIG_VARIABLE: str(config)}
        ),
    )
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    assert (account.home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()

    logs = []
    for launch in (1, 2):
        log = tmp_path / f"jupyterlab-{launch}.log"
        lab = Lab(engine_venv, account, config, log)
        try:
            _check_lab(lab, account, f"launch{launch}")
        finally:
            lab.stop()
        logs.append(log.read_text(errors="replace"))
    for launch, log in enumerate(logs, 1):
        errors = [line for line in log.splitlines() if ERROR_LINE.search(line)]
        assert not errors, f"launch {launch}'s log:\n" + "\n".join(errors)
    assert not (config / "migrated").exists()
    assert sorted(p.name for p in config.iterdir()) == sorted(
        ["jupyter_server_config.json", "labconfig", "nbgrader_config.json"]
    ), "Jupyter wrote into the students' configuration folder"
