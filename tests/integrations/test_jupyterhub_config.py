"""The JupyterHub configuration `attention-course jupyterhub` writes, read as JupyterHub reads
it (a traitlets Config filled in by running the file), and the plans it refuses. The hub
itself runs in tests/deploy/test_jupyterhub.py."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import Config

from attention_course.errors import UserError
from attention_course.integrations.jupyterhub import (
    LTI_AUTHENTICATOR,
    HubPlan,
    check_plan,
    hub_config_text,
    installed_already,
    write_hub,
)
from attention_course.integrations.student_config import LAB_CHECK, LAB_OPEN
from attention_course.integrations.wheel import build_wheel
from attention_course.settings import CHECK_URL_ENV, EXCHANGE_ENV
from tests.deploy.conftest import shared_folder

ME = pwd.getpwuid(os.getuid()).pw_name
STUDENT = "nobody"  # an account every Debian machine has, its home no folder


def _plan(tmp_path: Path, **changes) -> HubPlan:
    course = tmp_path / "course"
    course.mkdir(mode=0o700, exist_ok=True)
    course.chmod(0o700)
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    values = dict(
        course=course,
        out=tmp_path / "hub",
        venv=tmp_path / "venv",
        instructor=ME,
        students=(STUDENT,),
        exchange=tmp_path / "exchange",
        port=8123,
        proxy="/opt/proxy/configurable-http-proxy",
    )
    return HubPlan(**{**values, **changes})


def _load(text: str) -> Config:
    config = Config()
    exec(compile(text, "jupyterhub_config.py", "exec"), {"get_config": lambda: config})
    return config


def _spawned(config: Config, name: str) -> SimpleNamespace:
    spawner = SimpleNamespace(
        user=SimpleNamespace(name=name),
        environment=dict(config.Spawner.environment),
        notebook_dir="~",
    )
    config.Spawner.pre_spawn_hook(spawner)
    return spawner


def test_the_config_serves_the_course_to_its_accounts_through_pam(tmp_path):
    plan = _plan(tmp_path)
    c = _load(hub_config_text(plan))
    assert c.JupyterHub.authenticator_class == "pam"
    assert c.Authenticator.allowed_users == {ME, STUDENT}
    assert c.JupyterHub.bind_url == "http://127.0.0.1:8123/"
    assert c.ConfigurableHTTPProxy.command == ["/opt/proxy/configurable-http-proxy"]
    assert c.Spawner.cmd == [str(tmp_path / "venv" / "bin" / "jupyterhub-singleuser")]
    assert c.Spawner.environment["PATH"].startswith(str(tmp_path / "venv" / "bin") + ":")
    assert c.JupyterHub.services == [] and c.JupyterHub.load_roles == []

    instructor, student = _spawned(c, ME), _spawned(c, STUDENT)
    assert instructor.notebook_dir == str(plan.course.resolve())
    assert instructor.environment["JUPYTER_CONFIG_PATH"] == str(plan.instructor_config.resolve())
    assert instructor.environment[EXCHANGE_ENV] == str(plan.exchange.resolve())
    assert student.notebook_dir == "~"
    assert student.environment["JUPYTER_CONFIG_PATH"] == str(plan.student_config.resolve())
    assert EXCHANGE_ENV not in student.environment
    assert "JUPYTER_CONFIG_PATH" not in c.Spawner.environment  # each spawner got its own copy


def test_services_roles_variables_and_lines_of_ones_own_go_into_the_config(tmp_path):
    service = {"name": "checks", "url": "http://127.0.0.1:9999", "command": ["run-checks"]}
    role = {"name": "checks", "scopes": ["read:users"], "services": ["checks"]}
    plan = _plan(
        tmp_path,
        services=(service,),
        roles=(role,),
        environment={"CHECKS_URL": "/services/checks/"},
        extra_lines=("c.JupyterHub.shutdown_on_logout = True",),
    )
    c = _load(hub_config_text(plan))
    assert c.JupyterHub.services == [service]
    assert c.JupyterHub.load_roles == [role]
    assert _spawned(c, STUDENT).environment["CHECKS_URL"] == "/services/checks/"
    assert c.JupyterHub.shutdown_on_logout is True


def test_checks_add_the_grading_service_run_as_the_instructor(tmp_path):
    """`--checks`: the hub runs the course's grading service (its command from the hub's
    environment, as the instructor, who sees every check), every user and each server's token
    may reach it, and every server knows its address; both users' servers have the endpoint
    of the Check button (the instructor's, to try what students see)."""
    assert "course-check" not in hub_config_text(_plan(tmp_path))  # only when asked for
    plan = _plan(tmp_path, checks_port=8765)
    c = _load(hub_config_text(plan))
    (service,) = c.JupyterHub.services
    assert service["url"] == "http://127.0.0.1:8765" and service["user"] == ME
    assert service["command"] == [
        str(tmp_path / "venv" / "bin" / "attention-course"), "hub-check-service",
        "--course", str(plan.course.resolve()), "--instructors", ME,
    ]  # fmt: skip
    scope = "access:services!service=course-check"
    assert c.JupyterHub.load_roles == [{"name": "user", "scopes": ["self", scope]}]
    assert scope in c.Spawner.server_token_scopes
    for user in (ME, STUDENT):
        environment = _spawned(c, user).environment
        assert environment[CHECK_URL_ENV] == "http://127.0.0.1:8123/services/course-check/"
    nbgrader = "c = get_config()\nc.CourseDirectory.course_id = 'c'\nc.Exchange.root = '/x'\n"
    (plan.course / "nbgrader_config.py").write_text(nbgrader)
    written = write_hub(plan)
    # the configuration holds the services' tokens: the hub (its owner) reads it, nobody else
    assert plan.config_file in written
    assert stat.S_IMODE(plan.config_file.stat().st_mode) & 0o077 == 0
    for folder in (plan.student_config, plan.instructor_config):
        server = json.loads((folder / "jupyter_server_config.json").read_text())
        assert server["ServerApp"]["jpserver_extensions"][LAB_CHECK] is True, folder
    # formgrader: nbgrader's iframe tab off for the instructor (the course's extension opens
    # it in a tab of its own), and JupyterLab's news question off for everybody
    for folder in (plan.student_config, plan.instructor_config):
        page = json.loads((folder / "labconfig" / "page_config.json").read_text())
        off = page["disabledExtensions"]
        assert off["@jupyter/nbgrader:formgrader"] is True, folder
        assert off["@jupyterlab/apputils-extension:announcements"] is True, folder
    instructor_off = json.loads(
        (plan.instructor_config / "labconfig" / "page_config.json").read_text()
    )["disabledExtensions"]
    assert "@jupyter/nbgrader:assignment-list" not in instructor_off  # the Assignments tab


@pytest.mark.parametrize(
    "change, message",
    [
        ({"instructor": "no-such-account"}, "no-such-account: no such local account"),
        ({"students": ("no-such-account",)}, "no-such-account: no such local account"),
        ({"students": ()}, "no student accounts"),
        ({"students": (ME,)}, "both the instructor and a student"),
        ({"mode": 0o755}, "other accounts can enter it and read the graders"),
        # entering is enough: the graders and the reference are read by their known paths
        ({"mode": 0o711}, "other accounts can enter it and read the graders"),
        ({"mode": 0o701}, "other accounts can enter it and read the graders"),
        ({"mode": 0o704}, "other accounts can enter it and read the graders"),
        ({"exchange": "course/exchange"}, "inside the course folder"),
        ({"instructor": STUDENT, "students": (ME,)}, "not by the instructor nobody"),
    ],
)
def test_a_plan_that_would_fail_or_show_the_graders_is_refused(tmp_path, change, message):
    mode = change.pop("mode", None)
    if "exchange" in change:
        change["exchange"] = tmp_path / change["exchange"]
    plan = _plan(tmp_path, **change)
    if mode is not None:
        plan.course.chmod(mode)
    with pytest.raises(UserError, match=message):
        check_plan(plan)


def test_an_environment_counts_as_installed_only_with_the_wheels_very_files(tmp_path):
    """pip keeps an installed engine of the same version whatever its files; the command
    compares the files' hashes (RECORD), so a changed module is installed again."""
    wheel = build_wheel(tmp_path / "wheel")
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        record = archive.read(name).decode()
    info = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / name.split("/")[0]
    info.mkdir(parents=True)
    assert not installed_already(tmp_path / "venv", wheel)  # no RECORD: not installed
    (info / "RECORD").write_text(record + "attention_course/__pycache__/x.pyc,,\n")
    assert installed_already(tmp_path / "venv", wheel)
    first = next(line for line in record.splitlines() if line.startswith("attention_course/"))
    changed = first.replace(",sha256=", ",sha256=X")
    (info / "RECORD").write_text(record.replace(first, changed))
    assert not installed_already(tmp_path / "venv", wheel)
    (info / "RECORD").write_text(record + "attention_course/stale.py,sha256=abc,3\n")
    assert not installed_already(tmp_path / "venv", wheel)


LMS_TABLE = """
[lms]
issuer = "https://lms.example.edu"
client_id = "tool-1"
deployments = ["d1"]
authorize_url = "https://lms.example.edu/auth"
jwks_url = "https://lms.example.edu/jwks"
"""


def test_lti_replaces_passwords_with_launches_from_the_courses_lms(tmp_path):
    """`--lti`: the course's LTI 1.3 authenticator, pointed at the course (its [lms] table)
    and the instructor's account; no password login, no fixed list of students; the same
    environments per user; students' servers open an assignment from a link."""
    plan = _plan(tmp_path, students=(), lti=True)
    (plan.course / "course.toml").write_text('[course]\nid = "c"\n')
    with pytest.raises(UserError, match=r"no \[lms\] table"):
        check_plan(plan)
    (plan.course / "course.toml").write_text(LMS_TABLE)
    check_plan(plan)
    c = _load(hub_config_text(plan))
    assert c.JupyterHub.authenticator_class == LTI_AUTHENTICATOR
    assert c.CourseLTI13Authenticator.course == str(plan.course.resolve())
    assert c.CourseLTI13Authenticator.instructor == ME
    assert "allowed_users" not in c.Authenticator
    assert _spawned(c, "lti-4f2a").environment["JUPYTER_CONFIG_PATH"] == str(
        plan.student_config.resolve()
    )
    assert _spawned(c, ME).notebook_dir == str(plan.course.resolve())
    nbgrader = "c = get_config()\nc.CourseDirectory.course_id = 'c'\nc.Exchange.root = '/x'\n"
    (plan.course / "nbgrader_config.py").write_text(nbgrader)
    write_hub(plan)
    server = json.loads((plan.student_config / "jupyter_server_config.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"][LAB_OPEN] is True


def test_lti_needs_the_platforms_login_addresses(tmp_path):
    plan = _plan(tmp_path, students=(), lti=True)
    (plan.course / "course.toml").write_text(LMS_TABLE.replace('jwks_url = "https', "# "))
    with pytest.raises(UserError, match="needs jwks_url"):
        check_plan(plan)


def _as_student(*argv: str) -> subprocess.CompletedProcess:
    """`argv` run as the student account (nobody), as a student's terminal on the hub runs it."""
    return subprocess.run(
        argv, user=STUDENT, group="nogroup", extra_groups=[], capture_output=True, text=True
    )


@pytest.fixture
def account() -> Iterator[SimpleNamespace]:
    """A new ordinary Linux account (the instructor); removed afterwards. Needs root."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("making a Linux account needs root and useradd")
    name = f"ac-ins-{os.getpid() % 100000}"
    made = subprocess.run(["useradd", "--no-create-home", "--user-group", name], text=True)
    assert made.returncode == 0, f"useradd {name}"
    entry = pwd.getpwnam(name)
    yield SimpleNamespace(name=name, uid=entry.pw_uid, gid=entry.pw_gid)
    subprocess.run(["userdel", name], check=True)


def test_students_can_neither_rearrange_nor_forestall_the_exchange(account, tmp_path):
    """The course's instructor is a real account made by the test, the student `nobody`. A
    course folder the student made in the exchange before the hub was written is refused;
    once `write_hub` made the exchange (1777) and the course's folder in it (the
    instructor's), the student can neither move nor remove the course's folder, nor write
    into outbound/, nor list inbound/, and can still hand a submission into inbound/."""
    base = shared_folder("attention-exchange-")
    try:
        course = base / "course"
        course.mkdir(mode=0o700)
        (course / "nbgrader_config.py").write_text(
            'c = get_config()\nc.CourseDirectory.course_id = "attention-course"\n'
        )
        for path in (course, course / "nbgrader_config.py"):
            os.chown(path, account.uid, account.gid)
        exchange = base / "exchange"
        exchange.mkdir()
        exchange.chmod(0o1777)
        plan = _plan(tmp_path, course=course, instructor=account.name, exchange=exchange)
        mine = exchange / "attention-course"
        assert _as_student("mkdir", str(mine)).returncode == 0
        with pytest.raises(UserError, match=f"{mine}: made by {STUDENT}"):
            write_hub(plan)
        mine.rmdir()

        write_hub(plan)
        assert stat.S_IMODE(exchange.stat().st_mode) == 0o1777
        assert mine.stat().st_uid == account.uid
        for trick in (
            ["mv", str(mine), str(exchange / "renamed")],
            ["rm", "-r", str(mine / "outbound")],
            ["mkdir", str(mine / "outbound" / "fake-release")],
            ["ls", str(mine / "inbound")],
        ):
            done = _as_student(*trick)
            assert done.returncode != 0, (trick, done.stdout)
            assert "Permission denied" in done.stderr or "not permitted" in done.stderr, done
        assert sorted(p.name for p in exchange.iterdir()) == ["attention-course"]
        handed_in = mine / "inbound" / f"{STUDENT}+attention_basics+2026-12-07"
        assert _as_student("mkdir", str(handed_in)).returncode == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)
