"""The course's grading service on the course's JupyterHub, deployed as the README says
(tests/deploy/hub.py: the wheel in the hub's environment, configurable-http-proxy, local accounts
logged in through PAM, the grading service added by `--checks`). A student
checks with the command students run, as their own account, reads PASS/FAIL lines and hints,
reaches the limit and is told when the next check is allowed; the other student can neither
read nor spend the first one's checks (tokens tried both ways); the instructor lists every
check; after the due date checks are closed. The hub is the deploy tests' one
(tests/deploy/conftest.py course_hub), shared with the hub's own tests."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from attention_course.cli.samples import sample_notebooks
from attention_course.integrations.check_limits import readable
from attention_course.settings import CHECK_URL_ENV, HUB_CHECK
from tests.course import COURSE_ROOT
from tests.deploy.conftest import CHECK_WINDOW
from tests.deploy.hub import (
    SERVER_START_TIMEOUT,
    HubDeployment,
    user_token,
)

pytestmark = pytest.mark.deploy  # one venv for tests/deploy/ (tests/conftest.py GROUPS)

SERVICE_START = 60  # seconds for the service to answer once the hub does


def request(url, token=None, body=None, method=None, **query):
    """(status, JSON answer) of one request to the hub or the service."""
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    headers = {"Authorization": f"token {token}"} if token else {}
    method = method or ("GET" if body is None else "POST")
    req = urllib.request.Request(url, data=body, headers=headers, method=method)
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
def hub(engine_venv, course_hub) -> Iterator[dict]:
    """The course's hub with the grading service (one check per assignment per hour), the
    first two students' and the instructor's hub tokens, and masks_and_heads past its due
    date."""
    program = engine_venv.bin("attention-course")
    deployment = course_hub
    url = f"{deployment.hub.url}/services/{HUB_CHECK.service_name}/"
    deadline = time.monotonic() + SERVICE_START
    while request(url + "api/limit", assignment="attention_basics")[0] != 403:
        assert time.monotonic() < deadline, deployment.hub.log_text()[-4000:]
        time.sleep(0.5)
    instructor = deployment.instructor
    due = instructor.run(
        [engine_venv.bin("nbgrader"), "db", "assignment", "add", "masks_and_heads",
         "--duedate=2026-01-01 00:00:00 UTC"],
        cwd=deployment.course, timeout=120,
    )  # fmt: skip
    assert due.returncode == 0, due.stderr
    people = {"alice": deployment.students[0], "bob": deployment.students[1]}
    people["teacher"] = instructor
    tokens = {name: user_token(deployment.hub, account) for name, account in people.items()}
    yield {
        "url": url,
        "tokens": tokens,
        "people": people,
        "deployment": deployment,
        "program": program,
    }
    alice = people["alice"].name
    request(f"{deployment.hub.url}/hub/api/users/{alice}/server", tokens["alice"], method="DELETE")


def hub_log(hub) -> str:
    deployment: HubDeployment = hub["deployment"]
    return deployment.hub.log_text()[-4000:]


def server_environment(hub_url: str, account, token: str) -> dict[str, str]:
    """Start the account's JupyterLab through the hub (with their own token, as the hub's
    home page does) and read its environment (as root, from /proc): what every terminal and
    kernel of theirs sees, the server's own hub token and the service's address included."""
    status, answer = request(f"{hub_url}/hub/api/users/{account.name}/server", token, b"{}")
    # 400: running already (logging in through the hub's form, as user_token does, starts it)
    assert status in (201, 202) or "is already running" in answer.get("message", ""), answer
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while True:
        _, model = request(f"{hub_url}/hub/api/users/{account.name}", token)
        if model.get("servers", {}).get("", {}).get("ready"):
            break
        assert time.monotonic() < deadline, model
        time.sleep(0.5)
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit() or proc.stat().st_uid != account.uid:
                continue
            if b"jupyterhub-singleuser" not in (proc / "cmdline").read_bytes():
                continue
            raw = (proc / "environ").read_bytes()
        except OSError:
            continue
        return dict(v.split("=", 1) for v in raw.decode().split("\0") if "=" in v)
    raise AssertionError(f"no server process of {account.name}")


@pytest.fixture(scope="module")
def alices_check(hub):
    """alice, as her own account, checks her partly done notebook with the command students
    run, with her JupyterLab's environment (its hub token, the service's address), then
    again."""
    alice = hub["people"]["alice"]
    path = alice.home / "attention_basics.ipynb"
    nbformat.write(sample_notebooks("attention_basics", COURSE_ROOT)["demo-partial"], path)
    subprocess.run(["chown", f"{alice.name}:", str(path)], check=True)
    server = server_environment(hub["deployment"].hub.url, alice, hub["tokens"]["alice"])
    assert server[CHECK_URL_ENV] == hub["url"]
    assert server["JUPYTERHUB_API_TOKEN"] != hub["tokens"]["alice"]  # the server's own
    env = alice.env(**{k: server[k] for k in ("JUPYTERHUB_API_TOKEN", CHECK_URL_ENV)})
    asked = time.time()
    first = alice.run([hub["program"], "hub-check", path], env=env, timeout=300)
    second = alice.run([hub["program"], "hub-check", path], env=env, timeout=60)
    return {"path": path, "first": first, "second": second, "asked": asked}


def test_a_student_reads_pass_fail_lines_and_hints(hub, alices_check):
    first = alices_check["first"]
    assert first.returncode == 0, first.stderr + hub_log(hub)
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
            alices_check["path"], "attention_basics", course=Course.load(hub["deployment"].course)
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
    allowed = [readable(asked + CHECK_WINDOW + s) for s in range(0, 120)]  # the first + the window
    assert any(f"next check is allowed from {when}" in second.stderr for when in allowed), (
        second.stderr
    )
    assert "Traceback" not in second.stderr and len(second.stderr.splitlines()) == 1


def test_another_student_can_neither_read_nor_spend_the_first_ones_checks(hub, alices_check):
    url, tokens = hub["url"], hub["tokens"]
    alice, bob = hub["people"]["alice"].name, hub["people"]["bob"].name
    _, alices = request(url + "api/checks", tokens["alice"])
    check_id = alices["checks"][0]["id"]
    status, own = request(url + f"api/checks/{check_id}", tokens["alice"])
    assert status == 200 and own["check"]["feedback"]
    assert "detail" not in own["check"] and "student" not in own["check"]  # no seed for her
    status, answer = request(url + f"api/checks/{check_id}", tokens["bob"])
    assert status == 404 and "feedback" not in json.dumps(answer)
    assert request(url + "api/checks", tokens["bob"]) == (200, {"checks": []})
    assert request(url + "api/checks", tokens["bob"], all="1")[0] == 403
    assert request(url + "api/checks", tokens["bob"], student=alice)[0] == 403
    body = alices_check["path"].read_bytes()
    status, answer = request(url + "api/checks", tokens["bob"], body, student=alice)
    assert status == 403 and "only your own" in answer["error"]
    status, answer = request(url + "api/checks", tokens["alice"], body, student=bob)
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
    alice = hub["people"]["alice"].name
    (record,) = [c for c in listed["checks"] if c["student"] == alice]  # others: other tests'
    assert record["state"] == "graded"
    assert record["detail"].startswith("seed ")  # for the instructor; alice's answer has none
    assert record["assignment"] == "attention_basics" and record["score"] is not None
    course = hub["deployment"].course
    shown = hub["people"]["teacher"].run([hub["program"], "hub-checks", "--course", course])
    assert shown.returncode == 0, shown.stderr
    (row,) = [line for line in shown.stdout.splitlines() if record["student"] in line]
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


def test_the_students_own_server_checks_for_them(hub, alices_check):
    """The endpoint of alice's JupyterLab server (lab_check.py) sends her notebook with her
    server's token: her limit is spent, so it answers with the time of her next check. bob's
    token cannot reach her server."""
    alice = hub["people"]["alice"]
    endpoint = f"{hub['deployment'].hub.url}/user/{alice.name}/attention-course/hub-check"
    status, answer = request(endpoint, hub["tokens"]["alice"], b"", path=alices_check["path"].name)
    assert status == 429, answer
    assert "next check is allowed from" in answer["error"] and answer["next_allowed"]
    status, answer = request(endpoint, hub["tokens"]["bob"], b"", path=alices_check["path"].name)
    assert status in (403, 404), answer
    status, answer = request(endpoint, hub["tokens"]["alice"], b"", path="../../etc/passwd")
    assert status in (400, 403, 404), answer


def _status(pid: int, field: str) -> int:
    """A number of /proc/PID/status, in bytes (0 when the process is gone)."""
    try:
        text = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return 0
    found = re.search(rf"{field}:\s+(\d+) kB", text)
    return int(found.group(1)) * 1024 if found else 0


def _intake_workers(service: int) -> list[int]:
    """The service's processes that read the notebooks sent to it (check_intake.py), from
    its threads' lists of children (no scan of /proc: quick enough to see a reading)."""
    found = []
    for children in (Path("/proc") / str(service) / "task").glob("*/children"):
        try:
            pids = [int(pid) for pid in children.read_text().split()]
        except OSError:
            continue
        for pid in pids:
            try:
                argv = (Path("/proc") / str(pid) / "cmdline").read_bytes()
            except OSError:
                continue
            if b"check_intake" in argv:
                found.append(pid)
    return found


def _service_processes(deployment: HubDeployment) -> tuple[int, list[int]]:
    """The grading service's process (as root reads /proc) and its grading workers (its
    children that multiprocessing spawned)."""
    found, children = None, {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if b"hub-check-service" in argv and str(deployment.course).encode() in argv:
            found = int(proc.name)
        elif any(b"spawn_main" in word for word in argv):
            children[int(proc.name)] = parent
    assert found is not None, "no grading service process"
    return found, [pid for pid, parent in children.items() if parent == found]


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.3)


def test_a_check_cut_short_by_the_service_killed_is_not_counted_and_said_so(hub):
    """bob's check is running (its causal_mask never returns) when the service is killed
    (kill -9); the hub starts it again. The check is not lost: it is failed, its answer says
    that it does not count, and bob's checks left are whole; the killed service's grading
    worker and its folder of waiting notebooks are gone. His next check is graded and counted
    once. (Near the end of the module: it spends bob's check of attention_basics.)"""
    url, token = hub["url"], hub["tokens"]["bob"]
    deployment = hub["deployment"]
    nb = sample_notebooks("attention_basics", COURSE_ROOT)["demo-instructor"]
    for cell in nb.cells:
        if cell.get("id") == "causal_mask":
            cell.source = "def causal_mask(seq_len):\n    while True:\n        pass\n"
    status, asked = request(url + "api/checks", token, nbformat.writes(nb).encode())
    assert status == 202, asked
    check = url + f"api/checks/{asked['check']['id']}"
    _wait(lambda: request(check, token)[1]["check"]["state"] == "running", 120, "not running")
    _wait(lambda: _service_processes(deployment)[1], 60, "the service grades in no worker")
    killed, workers = _service_processes(deployment)
    os.kill(killed, signal.SIGKILL)
    _wait(lambda: request(url + "api/limit", token, assignment="attention_basics")[0] == 200,
          SERVICE_START, "the hub did not start the service again")  # fmt: skip
    assert _service_processes(deployment)[0] != killed

    status, answer = request(check, token)
    assert status == 200 and answer["check"]["state"] == "failed", answer
    assert "stopped before it graded this notebook" in answer["check"]["feedback"], answer
    assert "does not count" in answer["check"]["feedback"]
    _, limit = request(url + "api/limit", token, assignment="attention_basics")
    assert limit["checks_left"] == 1, limit
    _wait(lambda: not any(_alive(pid) for pid in workers), 30, "the killed service's worker lives")
    assert not list(Path("/tmp").glob(f"attention-checks-{killed}-*"))

    honest = sample_notebooks("attention_basics", COURSE_ROOT)["demo-instructor"]
    status, again = request(url + "api/checks", token, nbformat.writes(honest).encode())
    assert status == 202 and again["checks_left"] == 0, again
    graded = url + f"api/checks/{again['check']['id']}"
    _wait(lambda: request(graded, token)[1]["check"]["state"] == "graded", 240, "not graded")
    _, listed = request(url + "api/checks", token)
    assert [c["state"] for c in listed["checks"]] == ["failed", "graded"], listed


# minutes of a real service reading a bomb beside honest checks: scripts/test.sh --long (the same
# property in process: tests/integrations/test_hub_check.py, test_a_parse_bomb_costs_...)
@pytest.mark.long
def test_a_parse_bomb_through_the_service_costs_its_student_and_delays_nobody(hub):
    """bob posts a parse bomb (one code cell `x=[a,a,...]` of 1.4 MB, no assignment named: the
    service finds it by parsing the cells) to the running service (started again by the hub
    after the test above killed it);
    while a process of its intake reads it, alice's notebook is read and answered (the quiz:
    not checked here, nothing spent), before bob's; bob's is refused as abusive and counted.
    The service never parsed it: its peak resident memory is far within its data limit, which
    the service set on itself."""
    url, deployment = hub["url"], hub["deployment"]
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x=[" + "a," * 700_000 + "]"))
    answers: dict[str, tuple[int, dict]] = {}
    body = nbformat.writes(nb).encode()
    checks, token = url + "api/checks", hub["tokens"]["bob"]
    bob = threading.Thread(target=lambda: answers.update(bob=request(checks, token, body)))
    service = _service_processes(deployment)[0]
    bob.start()

    def reading() -> bool:  # a process of the intake grows as it reads bob's notebook
        return any(_status(p, "VmRSS") > 64 * 2**20 for p in _intake_workers(service))

    _wait(lambda: reading() or not bob.is_alive(), 60, "bob's notebook is not read")
    assert bob.is_alive(), answers
    quiz = (COURSE_ROOT / "release" / "attention_quiz" / "attention_quiz.ipynb").read_bytes()
    status, alice = request(url + "api/checks", hub["tokens"]["alice"], quiz)
    assert bob.is_alive(), "alice's notebook waited for bob's"
    assert status == 400 and "not checked here" in alice["error"], alice
    bob.join(60)
    status, refused = answers["bob"]
    assert status == 400 and "of memory to read: refused" in refused["error"], refused
    assert "counts as a check of attention_basics, masks_and_heads" in refused["error"]
    _, limit = request(url + "api/limit", hub["tokens"]["bob"], assignment="masks_and_heads")
    assert limit["checks_left"] == 0, limit
    limits = (Path("/proc") / str(service) / "limits").read_text()
    (data,) = [line.split() for line in limits.splitlines() if line.startswith("Max data size")]
    assert int(data[3]) == HUB_CHECK.service_memory, data
    assert _status(service, "VmHWM") < HUB_CHECK.service_memory // 2
