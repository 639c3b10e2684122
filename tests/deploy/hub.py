"""A real JupyterHub of the course for the tests, deployed as the README's "JupyterHub" section
says: local accounts made with useradd (passwords set with chpasswd), the course copied into the
instructor's own folder, `attention-course jupyterhub` run as the README writes it (the hub's
environment is the deploy tests' venv, this package installed from its wheel), and the hub
started from that environment with configurable-http-proxy on 127.0.0.1 (free ports).

    with deploy_hub(engine_venv, services=[...], roles=[...]) as deployment:
        release(deployment, "attention_basics")  # as the instructor, into the exchange
        session = log_in(deployment.hub, deployment.students[0])  # the hub's login form
        token = user_token(deployment.hub, deployment.students[0])  # an API token of theirs
        with chromium() as browser:
            page = new_page(browser)
            log_in_page(page, deployment.hub, deployment.students[0])  # to their JupyterLab

`services`, `roles`, `environment` and `extra_lines` go to HubPlan (the hub's services, their
roles, variables for every user's server, lines of one's own), and the config is written again
with them before the hub starts.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.cli.samples import sample_notebooks
from attention_course.integrations.jupyterhub import (
    HubPlan,
    hub_config_text,
    proxy_copy,
    write_hub,
)
from attention_course.settings import EXCHANGE_ENV
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, VIEWPORT
from tests.course import COURSE, COURSE_ROOT
from tests.deploy.conftest import Account, EngineVenv, clean_env, shared_folder
from tests.processes import free_port, stop_process

README = COURSE_ROOT / "README.md"
CHECKOUT_VENV = COURSE_ROOT / ".venv"
PROXY = CHECKOUT_VENV / "node_tools" / "node_modules" / ".bin" / "configurable-http-proxy"
SYSTEM_TOOLS = "/usr/sbin:/sbin:/usr/bin:/bin"
HUB_START_TIMEOUT = 90  # seconds for the hub (and its proxy) to answer
SERVER_START_TIMEOUT = 150  # seconds for a user's JupyterLab to start behind it
# The README's example names, replaced by the test's own.
README_COURSE, README_OUT, README_VENV = "/srv/course", "/srv/hub", "/opt/attention-hub"
README_EXCHANGE, README_INSTRUCTOR, README_STUDENTS = "/srv/exchange", "teacher", "ada,alan"


@dataclass(frozen=True)
class HubAccount(Account):
    """A local account with a password (the hub's login checks it through PAM)."""

    password: str = ""
    base: Path = Path("/nonexistent")  # the folder holding its home, removed with it


def _cannot_run(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"the JupyterHub tests cannot run under CI: {reason}", pytrace=False)
    pytest.skip(reason)


def _tool(name: str) -> str:
    found = shutil.which(name, path=SYSTEM_TOOLS)
    if found is None:
        _cannot_run(f"{name} is missing: no local account can be made")
    return str(found)


def make_account(prefix: str) -> HubAccount:
    """A new local account `prefix` + random hex, with a random password and its home in a
    folder of its own under /tmp. Remove it with `remove_account`."""
    base = shared_folder("attention-hub-home-")
    name = prefix + secrets.token_hex(3)
    password = secrets.token_urlsafe(12)
    home = base / name
    made = subprocess.run(
        [_tool("useradd"), "--create-home", "--home-dir", str(home), "--user-group", name],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"useradd {name}: {made.stderr.strip()}")
    home.chmod(0o700)  # students' homes closed to each other (`attention-course jupyterhub`)
    entry = pwd.getpwnam(name)
    account = HubAccount(name, entry.pw_uid, entry.pw_gid, home, password, base)
    set_password = subprocess.run(
        [_tool("chpasswd")], input=f"{name}:{password}\n", capture_output=True, text=True
    )
    if set_password.returncode != 0:
        remove_account(account)
        pytest.fail(f"chpasswd {name}: {set_password.stderr.strip()}")
    return account


def remove_account(account: HubAccount) -> None:
    """userdel -r the account, and remove its folder (its server, stopped with the hub, may
    take a moment to end)."""
    for _ in range(20):
        removed = subprocess.run(
            [_tool("userdel"), "--remove", account.name], capture_output=True, text=True
        )
        if removed.returncode != 8:  # 8: the account still has a process
            break
        time.sleep(0.5)
    shutil.rmtree(account.base, ignore_errors=True)
    assert removed.returncode == 0, f"userdel {account.name}: {removed.stderr.strip()}"


def readme_hub_commands() -> list[list[str]]:
    """The commands of the README's "JupyterHub" section, each as its words (continued lines
    joined, `sudo` dropped: the tests run as root)."""
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## JupyterHub\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "the README has no JupyterHub section"
    block = re.search(r"```bash\n(.*?)```", section.group(1), re.S)
    assert block, "the README's JupyterHub section has no commands"
    commands = []
    for line in block.group(1).replace("\\\n", " ").splitlines():
        words = shlex.split(line.split(" #")[0])
        if words:
            commands.append(words[1:] if words[0] == "sudo" else words)
    return commands


@dataclass
class RunningHub:
    """A JupyterHub process: its public address, its folder and its log."""

    process: subprocess.Popen
    url: str
    out: Path
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        """Stop the hub; it stops its proxy and, being root, every user's server."""
        stop_process(self.process, timeout=30)


@dataclass
class HubDeployment:
    """A running hub of the course and its accounts."""

    hub: RunningHub
    plan: HubPlan
    instructor: HubAccount
    students: tuple[HubAccount, ...]
    venv: EngineVenv
    base: Path  # the deployment's folder (course, hub files, exchange)
    start_argv: list[str] = field(default_factory=list)  # the README's command starting the hub
    readme_output: list[str] = field(default_factory=list)  # what the README's first one printed

    @property
    def course(self) -> Path:
        return self.plan.course

    @property
    def exchange(self) -> Path:
        return self.plan.exchange


def start_hub(argv: Sequence[str], out: Path, url: str) -> RunningHub:
    """Start the hub (`argv`, in `out`) and wait until its API answers through the proxy."""
    log = out / "jupyterhub.log"
    env = clean_env(PATH=f"{Path(argv[0]).parent}:/usr/local/bin:/usr/bin:/bin")
    with log.open("w") as sink:
        process = subprocess.Popen(
            list(argv), cwd=out, env=env, stdout=sink, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    hub = RunningHub(process, url, out, log)
    deadline = time.monotonic() + HUB_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"jupyterhub exited ({process.returncode}):\n{hub.log_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{url}/hub/api/", timeout=5) as answer:
                if answer.status == 200:
                    return hub
        except OSError:
            pass
        time.sleep(0.5)
    hub.stop()
    pytest.fail(f"jupyterhub did not answer in {HUB_START_TIMEOUT} s:\n{hub.log_text()[-4000:]}")


@contextmanager
def deploy_hub(
    venv: EngineVenv,
    students: int = 2,
    services: Sequence[dict] = (),
    roles: Sequence[dict] = (),
    environment: dict[str, str] | None = None,
    extra_lines: Sequence[str] = (),
    hub_check: str = "",
    lms: Callable[[str, Path], str] | None = None,
    nbgrader_lines: str = "",
) -> Iterator[HubDeployment]:
    """Deploy and start the course's hub as the README says, with an instructor and
    `students` student accounts; everything is stopped and removed afterwards. `hub_check`
    is the course's `[hub_check]` table (the checks' limits), added to its course.toml.

    `lms(hub_url, homes)` gives the course's `[lms]` table (its platform) for an LTI hub: the
    command is run with `--lti` instead of `--students`, students' accounts are made by the
    hub at their first launch with their homes under `homes`, and removed afterwards with
    the others. `nbgrader_lines` are added to the course's nbgrader_config.py."""
    if os.geteuid() != 0:
        _cannot_run("a JupyterHub of local accounts needs root (run the tests as root, as CI)")
    if not os.access(PROXY, os.X_OK):
        _cannot_run(f"{PROXY} is missing (bash scripts/setup.sh installs it)")
    base = shared_folder("attention-hub-")
    accounts: list[HubAccount] = []
    hub: RunningHub | None = None
    try:
        instructor = make_account("achubteach")
        accounts.append(instructor)
        learners = []
        for _ in range(students):
            learners.append(make_account("achubstud"))
            accounts.append(learners[-1])
        course = copy_course(base / "course", COURSE_ROOT)
        if hub_check:
            with (course / "course.toml").open("a") as toml:
                toml.write(f"\n[hub_check]\n{hub_check}\n")
        if nbgrader_lines:
            with (course / "nbgrader_config.py").open("a") as config:
                config.write(f"\n{nbgrader_lines}\n")
        subprocess.run(["chown", "-R", f"{instructor.name}:", str(course)], check=True)
        course.chmod(0o700)  # the graders and the gradebook: the instructor's alone
        plan = HubPlan(
            course=course,
            out=base / "hub",
            venv=venv.path,
            instructor=instructor.name,
            students=tuple(s.name for s in learners),
            exchange=base / "exchange",
            port=free_port(),
            hub_port=free_port(),
            proxy_api_port=free_port(),
            proxy=str(PROXY),
        )
        names = {
            README_COURSE: str(plan.course),
            README_OUT: str(plan.out),
            README_VENV: str(plan.venv),
            README_EXCHANGE: str(plan.exchange),
            README_INSTRUCTOR: plan.instructor,
            README_STUDENTS: ",".join(plan.students),
        }
        if lms is not None:
            homes = base / "lti-homes"
            homes.mkdir()
            homes.chmod(0o755)
            with (course / "course.toml").open("a") as toml:
                toml.write(lms(plan.url, homes))
        write, start = readme_hub_commands()
        write = [_named(word, names) for word in write]
        if lms is not None:  # the students come from the LMS
            at = write.index("--students")
            write[at : at + 2] = ["--lti"]
            plan = replace(plan, students=(), lti=True)
        write += ["--port", plan.port, "--hub-port", plan.hub_port]
        write += ["--proxy-api-port", plan.proxy_api_port]
        if "--checks" in write:  # the course's grading service, on a free port
            plan = replace(plan, checks_port=free_port())
            write += ["--checks-port", plan.checks_port]
        wrote = subprocess.run(
            [str(w) for w in write], cwd=COURSE_ROOT, env=clean_env(), capture_output=True,
            text=True, timeout=900, umask=0o077,  # a careful root's umask
        )  # fmt: skip
        assert wrote.returncode == 0, f"{write}:\n{wrote.stdout}\n{wrote.stderr}"
        plan = replace(plan, proxy=proxy_copy(plan.proxy, plan.venv))  # copied into the venv
        assert Path(plan.proxy).is_relative_to(plan.venv) and Path(plan.proxy).is_file()
        assert plan.config_file.read_text() == hub_config_text(plan)
        if services or roles or environment or extra_lines:
            plan = replace(
                plan,
                services=tuple(services),
                roles=tuple(roles),
                environment=dict(environment or {}),
                extra_lines=tuple(extra_lines),
            )
            write_hub(plan)
        start = [_named(word, names) for word in start]
        hub = start_hub(start, plan.out, plan.url)
        yield HubDeployment(
            hub, plan, instructor, tuple(learners), venv, base, start, wrote.stdout.splitlines()
        )
    finally:
        if hub is not None:
            hub.stop()
        for account in accounts:
            remove_account(account)
        for name in _lti_accounts(base / "course"):
            remove_account(HubAccount(name, 0, 0, Path("/nonexistent"), base=Path("/nonexistent")))
        shutil.rmtree(base, ignore_errors=True)


def _lti_accounts(course: Path) -> list[str]:
    """The accounts an LTI hub made for students at their launches (launches.json)."""
    try:
        book = json.loads((course / "lms" / "launches.json").read_text())
    except (OSError, ValueError):
        return []
    found = [u.get("student_id") for u in book.get("users", {}).values()]
    return [name for name in found if name and _exists(name)]


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _named(word: str, names: dict[str, str]) -> str:
    """A word of the README's commands with its example names replaced by the test's (and the
    checkout's .venv made absolute)."""
    if word.startswith(".venv/"):
        return str(COURSE_ROOT / word)
    for example, real in names.items():
        if word == example or word.startswith(example + "/"):
            return real + word[len(example) :]
    return word


# ---- logging in


class HubSession:
    """A logged-in browser-less session with the hub: its cookies and XSRF token."""

    def __init__(self, hub: RunningHub):
        self.hub = hub
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def xsrf(self) -> str:
        return next((c.value for c in self.cookies if c.name == "_xsrf"), "")

    def request(
        self, method: str, path: str, data: dict | None = None, form: bool = False
    ) -> tuple[int, bytes, str]:
        """(status, body, final URL) of a request; an HTTP error's status is returned."""
        headers = {"X-XSRFToken": self.xsrf(), "Referer": self.hub.url + "/hub/"}
        body = None
        if data is not None and form:
            body = urllib.parse.urlencode(data).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif data is not None:
            body = json.dumps(data).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(
            self.hub.url + path, data=body, method=method, headers=headers
        )
        try:
            with self.opener.open(request, timeout=60) as answer:
                return answer.status, answer.read(), answer.url
        except urllib.error.HTTPError as error:
            return error.code, error.read(), error.url


def log_in(hub: RunningHub, account: HubAccount, password: str | None = None) -> HubSession:
    """Log in through the hub's login form (as `account`, with its password unless another is
    given); the session is logged in only if the password was right (see `logged_in`). As in
    a browser, the hub then starts the account's server (its redirect to /hub/spawn)."""
    session = HubSession(hub)
    session.request("GET", "/hub/login")
    session.request(
        "POST",
        "/hub/login?next=",
        {"username": account.name, "password": password or account.password,
         "_xsrf": session.xsrf()},
        form=True,
    )  # fmt: skip
    return session


def logged_in(session: HubSession) -> str | None:
    """The name the hub knows the session by, or None."""
    status, body, _ = session.request("GET", "/hub/api/user")
    return json.loads(body)["name"] if status == 200 else None


def user_token(hub: RunningHub, account: HubAccount, note: str = "test") -> str:
    """A new API token of `account`, asked for by the account itself (logged in)."""
    session = log_in(hub, account)
    status, body, _ = session.request(
        "POST", f"/hub/api/users/{account.name}/tokens", {"note": note, "expires_in": 3600}
    )
    assert status in (200, 201), f"token of {account.name}: {status} {body[:300]!r}"
    return json.loads(body)["token"]


def log_in_page(page, hub: RunningHub, account: HubAccount) -> None:
    """Log in on the hub's login page in Chromium and wait for the account's JupyterLab."""
    page.goto(f"{hub.url}/hub/login")
    page.fill("input#username_input", account.name)
    page.fill("input#password_input", account.password)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{account.name}/lab**", timeout=SERVER_START_TIMEOUT * 1000)
    page.wait_for_selector("#jp-main-statusbar", timeout=SERVER_START_TIMEOUT * 1000)


def start_server(hub: RunningHub, account: HubAccount) -> HubSession:
    """Ask the hub to start `account`'s JupyterLab (as the account, logged in), without
    waiting for it; returns the logged-in session (`wait_for_server` waits)."""
    session = log_in(hub, account)
    status, body, _ = session.request("POST", f"/hub/api/users/{account.name}/server")
    assert status in (201, 202, 400), f"starting {account.name}'s server: {status} {body[:300]!r}"
    return session  # 400: it is already running


def wait_for_server(session: HubSession, name: str) -> None:
    """Wait until the hub says `name`'s server is ready."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        status, body, _ = session.request("GET", "/hub/api/user")
        if status == 200 and json.loads(body).get("servers", {}).get("", {}).get("ready"):
            return
        time.sleep(0.5)
    pytest.fail(f"{name}'s server did not start in {SERVER_START_TIMEOUT} s")


def release(deployment: HubDeployment, assignment: str) -> None:
    """Release `assignment` into the exchange as the instructor, as on a terminal of their
    JupyterLab (which has the exchange in its environment): `attention-course release`, then
    `nbgrader release_assignment`. Nothing to do when it is released already (the hub is
    shared by the deploy tests' modules)."""
    if (deployment.exchange / COURSE.id / "outbound" / assignment).is_dir():
        return
    instructor = deployment.instructor
    env = instructor.env(
        PATH=f"{deployment.venv.path / 'bin'}:/usr/bin:/bin",
        **{EXCHANGE_ENV: str(deployment.exchange)},
    )
    for program, step in (("attention-course", "release"), ("nbgrader", "release_assignment")):
        argv = [deployment.venv.bin(program), step, assignment]
        done = instructor.run(argv, cwd=deployment.course, env=env, timeout=300)
        assert done.returncode == 0, f"{program} {step}:\n{done.stdout}\n{done.stderr}"


@contextmanager
def chromium(shots: Path | None = None) -> Iterator[object]:
    """Debian's chromium, headless, through Playwright (as tests/browser/ starts it). `shots`,
    the folder of its screenshots, is made and emptied of an earlier run's (`screenshot`)."""
    from playwright.sync_api import sync_playwright

    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing (scripts/setup.sh installs it)"
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        for old in shots.glob("*.png"):
            old.unlink()
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


def screenshot(page, shots: Path, name: str) -> None:
    page.screenshot(path=str(shots / f"{name}.png"))


NOTEBOOK_CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"


def type_solutions(page, released: Path, sample: str) -> dict[str, str]:
    """Type the sample student `sample`'s solution cells (`attention-course demo`'s samples)
    into the notebook open on `page`, a copy of the released notebook `released`, as a student
    types them (unsaved); returns what was typed, by cell id."""
    assignment = released.stem
    by_id = {c.get("id"): c.source for c in sample_notebooks(assignment, COURSE_ROOT)[sample].cells}
    typed = {}
    cells = page.locator(NOTEBOOK_CELLS)
    for index, cell in enumerate(nbformat.read(released, 4).cells):
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            target = cells.nth(index)
            target.scroll_into_view_if_needed()
            target.locator(".cm-content").click()
            page.keyboard.press("Control+a")
            page.keyboard.insert_text(by_id[cell.get("id")])
            typed[cell.get("id")] = by_id[cell.get("id")]
    page.keyboard.press("Escape")
    return typed


def new_page(browser, **context_options):
    """A page in a fresh context (no cookies of another user), the browser tests' window size;
    `context_options` go to Playwright's new_context (a time zone, a locale)."""
    context = browser.new_context(viewport=VIEWPORT, **context_options)
    context.set_default_timeout(60_000)
    return context.new_page()
