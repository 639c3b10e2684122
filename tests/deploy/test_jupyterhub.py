"""The course on a real JupyterHub, deployed as the README's "JupyterHub" section says
(tests/deploy/hub.py): configurable-http-proxy on 127.0.0.1, local accounts made with useradd
and logged in through PAM, the instructor's course released into the shared exchange. Chromium
goes through the hub's login page as a student (fetch in the Assignments tab, fill in, Validate,
submit) and as the instructor (formgrader collects the submission and lists it). One hub for the
module. Screenshots go to the browser tests' folder, under hub/.
"""

from __future__ import annotations

import re
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from attention_course.integrations.jupyterhub import installed_already, jupyterhub_requirement
from attention_course.integrations.wheel import build_wheel
from attention_course.settings import EXCHANGE_ENV
from tests.browser.conftest import SCREENSHOTS
from tests.browser.lab import close_dialog, validate
from tests.course import COURSE_ROOT
from tests.deploy.hub import (
    HubDeployment,
    chromium,
    log_in,
    log_in_page,
    logged_in,
    new_page,
    release,
    screenshot,
    start_server,
    type_solutions,
    wait_for_server,
)

pytestmark = pytest.mark.deploy  # one venv for tests/deploy/ (tests/conftest.py GROUPS)

ASSIGNMENT = "attention_basics"
SHOTS = SCREENSHOTS / "hub"
SUCCESS = "Success! Your notebook passes all the tests."
NEWS_TEXT = "official Jupyter news"  # JupyterLab's question to every user about its news


@pytest.fixture(scope="module")
def hub(course_hub) -> Iterator[HubDeployment]:
    """The course's hub (tests/deploy/conftest.py, shared with the grading service's tests),
    with the assignment released by the instructor and every user's server started (while the
    instructor releases)."""
    deployment = course_hub
    accounts = [deployment.instructor, *deployment.students]
    sessions = [start_server(deployment.hub, account) for account in accounts]
    release(deployment, ASSIGNMENT)
    for session, account in zip(sessions, accounts, strict=True):
        wait_for_server(session, account.name)
    yield deployment


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Chromium for the module; this run's screenshots only in its folder."""
    with chromium(SHOTS) as browser:
        yield browser


def _shot(page, name: str) -> None:
    screenshot(page, SHOTS, name)


@dataclass
class StudentWork:
    """What the student did in the browser and what the pages said."""

    solutions: dict[str, str]  # solution cell id -> the code typed in
    validation: str  # the Validate dialog's text
    submitted: str  # the Assignments tab's list of submitted assignments
    news_asked: int  # how many times JupyterLab's news question was on the page at the end


def _open_assignments(page) -> None:
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
    page.locator("#released_assignments_list, #fetched_assignments_list").first.wait_for()


@pytest.fixture(scope="module")
def student_work(hub, browser) -> StudentWork:
    """The first student, in Chromium: logs in on the hub's page, fetches the assignment in the
    Assignments tab, opens it from there, types the instructor's solutions into its solution
    cells, saves, presses Validate, and submits in the Assignments tab."""
    student = hub.students[0]
    page = new_page(browser)
    log_in_page(page, hub.hub, student)
    _open_assignments(page)
    released = page.locator("#released_assignments_list .list_item", has_text=ASSIGNMENT)
    _shot(page, "student-assignments")
    released.get_by_role("button", name="Fetch").click()
    fetched = page.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT).first
    fetched.locator("a.assignment-notebooks-link").click()
    fetched.locator(".nested_list_item a", has_text=ASSIGNMENT).click()
    page.wait_for_selector("#jp-main-statusbar >> text=Idle")

    typed = type_solutions(
        page, student.home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", "demo-instructor"
    )
    page.keyboard.press("Control+s")
    page.wait_for_selector(".lm-DockPanel-tabBar .jp-mod-dirty", state="detached")
    validation = validate(page)
    _shot(page, "student-validate")
    close_dialog(page)

    page.locator(".lm-TabBar-tab", has_text="Assignments").click()
    fetched.get_by_role("button", name="Submit").click()
    submitted = page.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT)
    submitted.first.wait_for()
    _shot(page, "student-submitted")
    news_asked = page.get_by_text(NEWS_TEXT).count()  # the question comes a few seconds in
    work = StudentWork(typed, validation, submitted.first.inner_text(), news_asked)
    page.context.close()
    return work


def test_only_the_right_password_logs_in(hub):
    student = hub.students[0]
    assert logged_in(log_in(hub.hub, student, password="not-" + student.password)) is None
    assert logged_in(log_in(hub.hub, hub.students[1], password=student.password)) is None
    assert logged_in(log_in(hub.hub, student)) == student.name


def test_students_read_neither_the_course_nor_each_other_and_write_no_configuration(hub):
    student, other = hub.students[:2]
    for path in (
        hub.course / "grader_tests" / "test_softmax.py",
        hub.course / "nbgrader_config.py",
        hub.plan.config_file,
        other.home / ".bashrc",
    ):
        assert path.is_file(), path
        assert student.run(["cat", path]).returncode != 0, f"a student read {path}"
    for folder in (hub.plan.student_config, hub.plan.instructor_config, hub.plan.venv):
        wrote = student.run(["touch", folder / "written-by-a-student"])
        assert wrote.returncode != 0, f"a student wrote into {folder}"
    ran = student.run([hub.plan.venv / "bin" / "python", "-c", "import attention_course"])
    assert ran.returncode == 0, f"a student cannot run the environment's Python: {ran.stderr}"
    assert stat.S_IMODE(hub.plan.config_file.stat().st_mode) == 0o600


def test_the_environment_holds_this_engine_and_the_hubs_jupyterhub(hub, tmp_path):
    """What every user's server runs is this checkout's engine, file for file (pip alone keeps
    an installed engine of the same version), and the hub's version of JupyterHub."""
    assert installed_already(hub.plan.venv, build_wheel(tmp_path))
    found = hub.venv.run("python", "-c", "import jupyterhub; print(jupyterhub.__version__)")
    assert f"jupyterhub=={found.stdout.strip()}" == jupyterhub_requirement()


def test_each_server_runs_as_its_account_with_its_configuration(hub):
    """Each user's JupyterLab is a process of their own account, with the students' or the
    instructor's configuration; students have no formgrader."""
    servers = _singleuser_processes(hub.plan.venv)
    expected = {hub.instructor.uid: str(hub.plan.instructor_config)}
    expected |= {s.uid: str(hub.plan.student_config) for s in hub.students}
    assert sorted(servers) == sorted(expected), servers
    for uid, env in servers.items():
        assert env["JUPYTER_CONFIG_PATH"] == expected[uid]
        assert env.get(EXCHANGE_ENV) == (str(hub.exchange) if uid == hub.instructor.uid else None)
    for account, status in ((hub.students[0], 404), (hub.instructor, 200)):
        session = log_in(hub.hub, account)
        answer = session.request("GET", f"/user/{account.name}/formgrader")
        assert answer[0] == status, (account.name, answer[0])


def _singleuser_processes(venv: Path) -> dict[int, dict[str, str]]:
    """uid -> environment of every jupyterhub-singleuser process of the hub's environment
    `venv` (not another hub's: the machine may run others)."""
    program = str(venv / "bin" / "jupyterhub-singleuser").encode()
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
            uid = proc.stat().st_uid
        except OSError:
            continue
        if program in argv[:2]:
            env = dict(e.decode().partition("=")[::2] for e in environ if b"=" in e)
            found[uid] = env
    return found


def test_a_student_fetches_fills_in_validates_and_submits_in_the_browser(hub, student_work):
    student = hub.students[0]
    assert set(student_work.solutions) == {
        "softmax",
        "create_qkv",
        "causal_mask",
        "scaled_dot_product_attention",
    }
    assert SUCCESS in student_work.validation, student_work.validation
    assert ASSIGNMENT in student_work.submitted and "UTC" in student_work.submitted
    # the submission time as the students' configuration shows it: to the second
    assert re.search(r"\d\d:\d\d:\d\d UTC", student_work.submitted), student_work.submitted
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", student_work.submitted), student_work.submitted
    assert not student_work.news_asked, "the hub's students are asked about JupyterLab's news"
    (inbound,) = (hub.exchange / "attention-course" / "inbound").iterdir()
    assert inbound.name.startswith(f"{student.name}+{ASSIGNMENT}+"), inbound.name
    saved = nbformat.read(inbound / f"{ASSIGNMENT}.ipynb", 4)
    cells = {c.get("id"): c.source for c in saved.cells}
    for cell_id, code in student_work.solutions.items():
        assert cells[cell_id] == code, f"{cell_id}: the submitted cell is not what was typed"


def test_the_instructor_collects_and_sees_the_submission_in_formgrader(hub, browser, student_work):
    """From the instructor's JupyterLab: Nbgrader > Formgrader opens formgrader in a browser
    tab of its own (an iframe is forbidden by the hub's pages' frame-ancestors, left as it is);
    there the instructor collects the submission and sees it."""
    student, other = hub.students[:2]
    lab = new_page(browser)
    log_in_page(lab, hub.hub, hub.instructor)
    lab.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
    with lab.context.expect_page() as opened:
        lab.locator(".lm-Menu-itemLabel", has_text="Formgrader (new browser tab)").click()
    page = opened.value
    page.wait_for_load_state()
    address = f"{hub.hub.url}/user/{hub.instructor.name}/formgrader"
    assert page.url.startswith(address), page.url
    assert lab.locator("iframe").count() == 0  # no framed formgrader in the lab
    policy = page.request.get(address).headers.get("content-security-policy", "")
    assert "frame-ancestors 'none'" in policy, policy  # the hub's policy, not weakened
    assert lab.get_by_text(NEWS_TEXT).count() == 0  # the instructor is not asked either
    page.goto(f"{address}/manage_assignments")
    row = page.locator("tr", has_text=ASSIGNMENT).first
    row.locator(".collect a").click()
    modal = page.locator("#success-modal")
    modal.wait_for()
    assert f"Collecting submission: {student.name} {ASSIGNMENT}" in modal.inner_text()
    modal.get_by_role("button", name="OK").click()
    row.locator(".num-submissions a", has_text="1").click()
    page.wait_for_url(f"**/formgrader/manage_submissions/{ASSIGNMENT}")
    page.locator("table tbody tr", has_text=student.name).wait_for()
    _shot(page, "instructor-submissions")
    rows = page.locator("table tbody tr").all_inner_texts()
    assert len(rows) == 1 and student.name in rows[0] and other.name not in rows[0], rows
    collected = hub.course / "submitted" / student.name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert collected.is_file()
    cells = {c.get("id"): c.source for c in nbformat.read(collected, 4).cells}
    assert cells["softmax"] == student_work.solutions["softmax"]
    page.context.close()


# The hub's one error the deploy tests cause on purpose: the grading service killed mid-check
# (tests/deploy/test_hub_check.py), which the hub then starts again.
SERVICE_KILLED = re.compile(r"^\[E .*\] Service course-check exited with status -9$")


def test_the_hub_log_holds_no_error(hub, student_work):
    lines = hub.hub.log_text().splitlines()
    errors = [
        i
        for i, line in enumerate(lines)
        if (line.startswith("[E ") or "Traceback" in line) and not SERVICE_KILLED.match(line)
    ]
    said = []  # each error with what follows it up to the next record (its traceback), whole
    for i in errors:
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("[")), len(lines))
        said.append("\n".join(lines[i : min(end, i + 60)]))
    assert not errors, "\n".join(said)


def test_the_command_says_to_start_the_hub_as_the_readme_does(hub):
    said = [line for line in hub.readme_output if line.startswith("Start the hub")]
    assert said == [f"Start the hub (as root): {' '.join(hub.start_argv)}"], hub.readme_output


def test_the_command_refuses_a_student_home_open_to_others(hub):
    """Students on one machine would read each other's work: one line, exit 2, nothing written."""
    student = hub.students[1]
    plan = hub.plan
    argv = [COURSE_ROOT / ".venv" / "bin" / "attention-course", "jupyterhub"]
    argv += ["--course", plan.course, "--out", plan.out.parent / "second-hub", "--venv", plan.venv]
    argv += ["--exchange", plan.exchange, "--instructor", plan.instructor]
    argv += ["--students", ",".join(plan.students), "--proxy", plan.proxy]
    student.home.chmod(0o755)
    try:
        done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=120)
    finally:
        student.home.chmod(0o700)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        f"attention-course: error: {student.home}: {student.name}'s home is open to other "
        f"accounts, so students could read each other's work (chmod 700 {student.home})"
    ), done.stderr
    assert not (plan.out.parent / "second-hub").exists()
