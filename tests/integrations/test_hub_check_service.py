"""The course's grading service run by a real JupyterHub (with configurable-http-proxy) on
127.0.0.1: a student checks through the hub with the command students run, reads PASS/FAIL
lines and hints, reaches the limit and is told when the next check is allowed; another student
can neither read nor spend the first one's checks (tokens tried both ways); the instructor lists
every check; after the due date checks are closed. One hub for the module."""

from __future__ import annotations

import datetime
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from attention_course.classgrade.gradebook import find_alembic
from attention_course.classgrade.nbgrader_api import copy_course, open_gradebook
from attention_course.cli.samples import sample_notebooks
from attention_course.integrations.check_limits import readable
from attention_course.integrations.hub_check import hub_service, hub_settings, service_scope
from attention_course.settings import CHECK_URL_ENV
from tests.course import COURSE_ROOT
from tests.pgserver import free_port

PROXY_PACKAGE = "configurable-http-proxy@5.3.0"
TOOLS = COURSE_ROOT / ".venv" / "node_tools"
WINDOW = 3600  # a check counts this long (seconds)
NAME = "course-check"


def proxy_program() -> str:
    """configurable-http-proxy: on PATH, else installed from npm into .venv/node_tools."""
    found = shutil.which("configurable-http-proxy")
    local = TOOLS / "node_modules" / ".bin" / "configurable-http-proxy"
    if found:
        return found
    if not local.exists():
        subprocess.run(
            ["npm", "install", "--prefix", str(TOOLS), "--no-audit", "--no-fund", PROXY_PACKAGE],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return str(local)


def request(url, token=None, body=None, **query):
    """(status, JSON answer) of one request to the hub or the service."""
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    headers = {"Authorization": f"token {token}"} if token else {}
    req = urllib.request.Request(url, data=body, headers=headers, method="POST" if body else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw)
        except ValueError:
            return exc.code, {"raw": raw.decode(errors="replace")}


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hub")
    course = copy_course(folder / "course", COURSE_ROOT)
    find_alembic()
    open_gradebook(course)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:  # masks_and_heads is past due
        gb.update_or_create_assignment("masks_and_heads", duedate=datetime.datetime(2026, 1, 1))
    port, service_port = free_port(), free_port()
    public = f"http://127.0.0.1:{port}"
    admin_token = secrets.token_hex(16)
    settings = hub_settings(public)
    service = hub_service(course, service_port, options=("--per-day", "1", "--window", str(WINDOW)))
    service["environment"] = {"PATH": os.environ["PATH"]}
    config = folder / "jupyterhub_config.py"
    config.write_text(
        "\n".join(
            [
                "c = get_config()  # noqa",
                f"c.JupyterHub.bind_url = {public!r}",
                "c.JupyterHub.hub_ip = '127.0.0.1'",
                f"c.JupyterHub.hub_port = {free_port()}",
                f"c.ConfigurableHTTPProxy.command = [{proxy_program()!r}]",
                f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{free_port()}'",
                f"c.JupyterHub.db_url = 'sqlite:///{folder / 'jupyterhub.sqlite'}'",
                f"c.JupyterHub.cookie_secret_file = {str(folder / 'cookie_secret')!r}",
                "c.JupyterHub.authenticator_class = 'dummy'",
                "c.Authenticator.allowed_users = {'alice', 'bob'}",
                "c.Authenticator.admin_users = {'teacher'}",
                "c.JupyterHub.load_groups = {'instructors': {'users': ['teacher']}}",
                f"c.JupyterHub.services = [{service!r}, "
                f"{{'name': 'test-admin', 'api_token': {admin_token!r}}}]",
                "c.JupyterHub.load_roles = "
                + repr(
                    settings["load_roles"]
                    + [
                        {
                            "name": "test-admin",
                            "scopes": ["admin:users", "tokens"],
                            "services": ["test-admin"],
                        }
                    ]
                ),
                f"c.Spawner.server_token_scopes = {settings['server_token_scopes']!r}",
                f"c.Spawner.environment = {settings['environment']!r}",
            ]
        )
        + "\n"
    )
    log = (folder / "hub.log").open("w")
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("jupyterhub")), "-f", str(config)],
        cwd=folder,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    check_url = f"{public}/services/{NAME}/"
    try:
        deadline = time.monotonic() + 60
        while True:  # the hub, its proxy and the service answer
            assert proc.poll() is None, (folder / "hub.log").read_text()[-3000:]
            try:
                status, _ = request(check_url + "api/limit", assignment="attention_basics")
                if status == 403:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, (folder / "hub.log").read_text()[-3000:]
            time.sleep(0.3)
        tokens = {}
        for user in ("alice", "bob", "teacher"):
            status, made = request(
                f"{public}/hub/api/users/{user}/tokens",
                admin_token,
                json.dumps({"scopes": [service_scope()], "note": "test"}).encode(),
            )
            assert status == 201, made
            tokens[user] = made["token"]
        yield {
            "url": check_url,
            "tokens": tokens,
            "course": course,
            "folder": folder,
            "log": folder / "hub.log",
        }
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def alices_check(hub):
    """alice checks her partly done notebook with the command students run, then again."""
    path = hub["folder"] / "alice" / "attention_basics.ipynb"
    path.parent.mkdir()
    nbformat.write(sample_notebooks("attention_basics", COURSE_ROOT)["demo-partial"], path)
    env = dict(
        os.environ, JUPYTERHUB_API_TOKEN=hub["tokens"]["alice"], **{CHECK_URL_ENV: hub["url"]}
    )
    program = str(Path(sys.executable).with_name("attention-course"))
    asked = time.time()
    first = subprocess.run(
        [program, "hub-check", str(path)], env=env, capture_output=True, text=True, timeout=300
    )
    second = subprocess.run(
        [program, "hub-check", str(path)], env=env, capture_output=True, text=True, timeout=60
    )
    return {"path": path, "first": first, "second": second, "asked": asked}


def test_a_student_reads_pass_fail_lines_and_hints(hub, alices_check):
    first = alices_check["first"]
    assert first.returncode == 0, first.stderr + hub["log"].read_text()[-3000:]
    out = first.stdout
    assert "PASS [" in out and "FAIL [" in out, out
    hints = [line for line in out.splitlines() if line.startswith("     ") and line.strip()]
    assert hints, out  # a failed test's hint, indented under its FAIL line
    assert "checks of attention_basics left today: 0" in out
    assert "seed" not in out and "grader_tests" not in out  # nothing of the grading side


def test_the_check_is_graded_as_the_final_grade_is(hub, alices_check):
    """The same graders, sandbox and per-submission seed (the course's grading key): the
    score the service recorded is the one grade_file gives the same file."""
    from attention_course.course import Course
    from attention_course.grading.graders import grade_file
    from attention_course.settings import GRADING_KEY_ENV

    status, listed = request(hub["url"] + "api/checks", hub["tokens"]["alice"])
    assert status == 200
    (record,) = listed["checks"]
    key = os.environ.pop(GRADING_KEY_ENV, None)  # the service's: the course's key file
    try:
        report = grade_file(
            alices_check["path"], "attention_basics", course=Course.load(hub["course"])
        )
    finally:
        if key is not None:
            os.environ[GRADING_KEY_ENV] = key
    assert (record["score"], record["max_score"]) == (report.score, report.max_score)
    assert 0 < report.score < report.max_score
    assert f"attention_basics: {report.score:g} / {report.max_score:g} points" in (
        alices_check["first"].stdout
    )


def test_the_limit_says_when_the_next_check_is_allowed(hub, alices_check):
    second = alices_check["second"]
    assert second.returncode == 1
    asked = alices_check["asked"]
    allowed = [readable(asked + WINDOW + s) for s in range(0, 120)]  # the first + the window
    assert any(f"next check is allowed from {when}" in second.stderr for when in allowed), (
        second.stderr
    )
    assert "Traceback" not in second.stderr and len(second.stderr.splitlines()) == 1


def test_another_student_can_neither_read_nor_spend_the_first_ones_checks(hub, alices_check):
    url, tokens = hub["url"], hub["tokens"]
    _, alices = request(url + "api/checks", tokens["alice"])
    check_id = alices["checks"][0]["id"]
    assert request(url + f"api/checks/{check_id}", tokens["alice"])[0] == 200
    status, answer = request(url + f"api/checks/{check_id}", tokens["bob"])
    assert status == 404 and "feedback" not in json.dumps(answer)
    assert request(url + "api/checks", tokens["bob"]) == (200, {"checks": []})
    assert request(url + "api/checks", tokens["bob"], all="1")[0] == 403
    assert request(url + "api/checks", tokens["bob"], student="alice")[0] == 403
    body = alices_check["path"].read_bytes()
    status, answer = request(url + "api/checks", tokens["bob"], body, student="alice")
    assert status == 403 and "only your own" in answer["error"]
    status, answer = request(url + "api/checks", tokens["alice"], body, student="bob")
    assert status == 403
    # bob's own checks are untouched by alice's, and alice's by bob's attempts
    assert (
        request(url + "api/limit", tokens["bob"], assignment="attention_basics")[1]["checks_left"]
        == 1
    )
    _, after = request(url + "api/checks", tokens["alice"])
    assert [c["id"] for c in after["checks"]] == [check_id]
    for token in (None, "0" * 32):  # no token, a made-up one
        assert request(url + "api/checks", token)[0] == 403


def test_the_instructor_lists_every_check(hub, alices_check):
    status, listed = request(hub["url"] + "api/checks", hub["tokens"]["teacher"], all="1")
    assert status == 200
    (record,) = listed["checks"]
    assert record["student"] == "alice" and record["state"] == "graded"
    assert record["assignment"] == "attention_basics" and record["score"] is not None
    shown = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "hub-checks"],
        cwd=hub["course"],
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0, shown.stderr
    (row,) = [line for line in shown.stdout.splitlines() if "alice" in line]
    assert "attention_basics" in row and "graded" in row
    assert f"{record['score']:g} / {record['max_score']:g}" in row


def test_checks_are_closed_after_the_due_date(hub):
    nb = sample_notebooks("masks_and_heads", COURSE_ROOT)["demo-instructor"]
    status, answer = request(
        hub["url"] + "api/checks",
        hub["tokens"]["bob"],
        nbformat.writes(nb).encode(),
        assignment="masks_and_heads",
    )
    assert status == 403, answer
    assert "due date (Thu 1 Jan 2026, 00:00 UTC) has passed" in answer["error"]
