"""A JupyterHub for the course: its jupyterhub_config.py and what the hub's users need.

`write_hub` writes, into one folder: `jupyterhub_config.py` (local accounts through PAM, each
user's JupyterLab started as that account by the hub, behind configurable-http-proxy), the
students' Jupyter configuration (student_config.py: the Assignments tab and Validate, no
instructor tools) and the instructor's (the course folder, formgrader), both readable by every
account and writable by none of them. It makes nbgrader's exchange, a folder shared by everybody
outside the course folder (which holds the graders and must stay the instructor's alone).
`install_environment` installs this package from its wheel, and JupyterHub, into one virtual
environment every account can run: the hub's own and every user's server's.

With `checks_port`, the hub also runs the course's grading service (hub_check.py) on that port,
as the instructor: students check notebooks with the hidden graders from JupyterLab (the course's
"Check with the course's graders" button, lab_check.py) or a terminal. More hub services
(`c.JupyterHub.services`), their roles (`c.JupyterHub.load_roles`), variables for every user's
server and lines of configuration of one's own are passed to `write_hub`.

With `lti`, users come from the course's LMS instead of local passwords: LTI 1.3 launches
(lms/hub_auth.py, from the `lti` extra), the platform declared in course.toml's `[lms]`; a
student's account is made at their first launch, the instructor's context roles give the
instructor's account. Local accounts stay the default.
"""

from __future__ import annotations

import json
import os
import pprint
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from attention_course.errors import UserError
from attention_course.integrations.student_config import (
    FILE_MODE,
    FOLDER_MODE,
    LAB_CHECK,
    NBGRADER_FORMGRADER,
    QUIET_PLUGINS,
    course_settings,
    write_student_config,
)
from attention_course.integrations.wheel import build_wheel
from attention_course.settings import EXCHANGE_ENV, HUB

# The exchange as nbgrader expects it: every account writes into it (nbgrader checks that it
# can), and the sticky bit keeps each account's entries its own (nobody renames or removes the
# course's folder but its owner). The course's folder in it is made beforehand, the
# instructor's: `outbound/` (releases) read-only to students, `inbound/` (submissions) writable
# and not listable by them, as nbgrader's release makes them (0755, 0755, 02733).
EXCHANGE_MODE = 0o1777
EXCHANGE_COURSE_MODES = {"": 0o755, "outbound": 0o755, "inbound": 0o2733}
# jupyterhub_config.py may hold services' tokens: read by the hub (root) alone.
CONFIG_MODE = 0o600
PIP_TIMEOUT = 1800  # seconds for pip to install the environment


@dataclass(frozen=True)
class HubPlan:
    """What the hub serves: the course, its accounts, where everything goes, its addresses."""

    course: Path  # the instructor's course folder (nbgrader_config.py at its top)
    out: Path  # where the hub's files go
    venv: Path  # the environment of the hub and of every user's server
    instructor: str  # the instructor's local account
    students: tuple[str, ...]  # the students' local accounts
    exchange: Path  # nbgrader's exchange, shared by everybody
    ip: str = HUB.ip
    port: int = HUB.port
    hub_port: int = HUB.hub_port
    proxy_api_port: int = HUB.proxy_api_port
    proxy: str = HUB.proxy
    services: tuple[dict, ...] = ()  # entries of c.JupyterHub.services
    roles: tuple[dict, ...] = ()  # entries of c.JupyterHub.load_roles
    environment: dict[str, str] = field(default_factory=dict)  # for every user's server
    extra_lines: tuple[str, ...] = ()  # configuration lines of one's own, appended as they are
    checks_port: int | None = None  # the course's grading service on this port (None: none)
    lti: bool = False  # LTI 1.3 launches from the LMS (course.toml's [lms]) instead of PAM

    @property
    def config_file(self) -> Path:
        return self.out / HUB.config_file

    @property
    def student_config(self) -> Path:
        return self.out / HUB.student_config

    @property
    def instructor_config(self) -> Path:
        return self.out / HUB.instructor_config

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{self.port}"


def check_plan(plan: HubPlan) -> None:
    """UserError, one line, for a plan that cannot work or that would show students the
    graders: missing accounts, a course other accounts can read, an exchange inside it."""
    course = plan.course.resolve()
    if not (course / "nbgrader_config.py").is_file():
        raise UserError(f"{plan.course}: not a course folder (no nbgrader_config.py)")
    _account(plan.instructor)
    for name in plan.students:
        home = Path(_account(name).pw_dir)
        if home.is_dir() and home.stat().st_mode & (stat.S_IROTH | stat.S_IXOTH):
            raise UserError(
                f"{home}: {name}'s home is open to other accounts, so students could read each "
                f"other's work (chmod 700 {home})"
            )
    if plan.lti:
        from attention_course.integrations.lms import config

        config.require(course).need("authorize_url", "jwks_url")
    elif not plan.students:
        raise UserError("no student accounts (--students NAME,NAME...)")
    if plan.instructor in plan.students:
        raise UserError(f"{plan.instructor}: both the instructor and a student")
    owner = pwd.getpwuid(course.stat().st_uid).pw_name
    if owner != plan.instructor:
        raise UserError(
            f"{plan.course}: owned by {owner}, not by the instructor {plan.instructor} "
            f"(chown -R {plan.instructor} {plan.course}): formgrader writes there"
        )
    if course.stat().st_mode & (stat.S_IROTH | stat.S_IXOTH):
        raise UserError(
            f"{plan.course}: other accounts can enter it and read the graders and the gradebook "
            f"(chmod 700 {plan.course})"
        )
    exchange = plan.exchange.resolve()
    if exchange == course or course in exchange.parents:
        raise UserError(
            f"{plan.exchange}: inside the course folder, which students must not enter: "
            "choose a folder outside it"
        )
    _check_exchange(plan)
    if not plan.venv.is_absolute():
        raise UserError(f"{plan.venv}: give the environment's absolute path")


def _check_exchange(plan: HubPlan) -> None:
    """UserError for an exchange that students could rearrange: one owned by another account
    than root, this one or the instructor's; the course's folder in it, or its inbound/ and
    outbound/, made by anyone but the instructor or open wider than nbgrader makes them (a
    student who made them first would collect the submissions or serve the releases)."""
    exchange = plan.exchange
    if not exchange.exists():
        return
    mine = {0, os.getuid(), _account(plan.instructor).pw_uid}
    info = exchange.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid not in mine:
        raise UserError(f"{exchange}: not a folder of root's or the instructor's: choose another")
    course_id, _ = course_settings(plan.course)
    instructor = _account(plan.instructor).pw_uid
    for name, mode in EXCHANGE_COURSE_MODES.items():
        folder = exchange / course_id / name if name else exchange / course_id
        try:
            info = folder.lstat()
        except FileNotFoundError:
            continue
        looser = stat.S_IMODE(info.st_mode) & ~mode & 0o777
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != instructor or looser:
            owner = _owner(info.st_uid)
            raise UserError(
                f"{folder}: made by {owner} (mode {stat.S_IMODE(info.st_mode):o}), not the "
                f"instructor's with mode {mode:o} or closer: remove it, then run this again"
            )


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _account(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise UserError(f"{name}: no such local account (useradd it first)") from None


def write_hub(plan: HubPlan) -> list[Path]:
    """Write the hub's folder (jupyterhub_config.py, the students' and the instructor's
    configuration) and make the exchange; returns the files written."""
    check_plan(plan)
    course_id, _ = course_settings(plan.course)
    _shared_folder(plan.out)
    _make_exchange(plan, course_id)
    files = write_student_config(plan.student_config, course_id, str(plan.exchange))
    files += _write_instructor_config(plan, course_id)
    plan.config_file.write_text(hub_config_text(plan))
    plan.config_file.chmod(CONFIG_MODE)
    return [*files, plan.config_file]


def _make_exchange(plan: HubPlan, course_id: str) -> None:
    """The exchange (EXCHANGE_MODE) and the course's folders in it, the instructor's."""
    plan.exchange.mkdir(parents=True, exist_ok=True)
    plan.exchange.chmod(EXCHANGE_MODE)
    instructor = _account(plan.instructor)
    for name, mode in EXCHANGE_COURSE_MODES.items():
        folder = plan.exchange / course_id / name if name else plan.exchange / course_id
        folder.mkdir(exist_ok=True)
        if folder.stat().st_uid != instructor.pw_uid:
            os.chown(folder, instructor.pw_uid, instructor.pw_gid)
        folder.chmod(mode)


def _shared_folder(folder: Path) -> None:
    """`folder` (and its missing parents) readable and enterable by every account."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    for made in missing:
        made.chmod(FOLDER_MODE)
    folder.chmod(FOLDER_MODE)


def _write_instructor_config(plan: HubPlan, course_id: str) -> list[Path]:
    """The instructor's Jupyter configuration: nbgrader finds the course (formgrader, the
    Assignments tab) and the shared exchange; the server has the endpoint of the course's
    "Check with the course's graders" button (lab_check.py), so that the instructor can try
    what students see."""
    folder = plan.instructor_config
    _shared_folder(folder)
    files = {
        folder / "nbgrader_config.json": {
            "CourseDirectory": {"root": str(plan.course.resolve()), "course_id": course_id},
            "Exchange": {"root": str(plan.exchange.resolve())},
        },
        folder / "jupyter_server_config.json": {
            "ServerApp": {"jpserver_extensions": {LAB_CHECK: True}}
        },
        # nbgrader's formgrader tab is an iframe, which the hub's pages forbid (their
        # Content-Security-Policy frame-ancestors, kept as it is): its plugin is off, and the
        # course's extension opens the same "Nbgrader > Formgrader" item in a tab of its own.
        folder / "labconfig" / "page_config.json": {
            "disabledExtensions": {plugin: True for plugin in (NBGRADER_FORMGRADER, *QUIET_PLUGINS)}
        },
    }
    for path, data in files.items():
        _shared_folder(path.parent)
        path.write_text(json.dumps(data, indent=2) + "\n")
        path.chmod(FILE_MODE)
    return list(files)


def hub_config_text(plan: HubPlan) -> str:
    """The text of jupyterhub_config.py for `plan`."""
    venv_bin = plan.venv / "bin"
    path = f"{venv_bin}:/usr/local/bin:/usr/bin:/bin"
    out = plan.out.resolve()
    environment = {"PATH": path, **plan.environment}
    values = {
        "INSTRUCTOR": plan.instructor,
        "COURSE": str(plan.course.resolve()),
        "STUDENT_CONFIG": str(plan.student_config.resolve()),
        "INSTRUCTOR_CONFIG": str(plan.instructor_config.resolve()),
        "EXCHANGE": str(plan.exchange.resolve()),
    }
    lines = [
        '"""JupyterHub of the course (written by `attention-course jupyterhub`; write it again',
        'rather than edit it)."""',
        "",
        *(f"{name} = {value!r}" for name, value in values.items()),
        "",
        "c = get_config()  # noqa: F821 (provided by JupyterHub)",
        "",
        "# Where it listens: the proxy's public address; the hub's and the proxy's APIs locally.",
        f"c.JupyterHub.bind_url = {plan.url + '/'!r}",
        f"c.JupyterHub.hub_bind_url = {f'http://127.0.0.1:{plan.hub_port}'!r}",
        f"c.ConfigurableHTTPProxy.api_url = {f'http://127.0.0.1:{plan.proxy_api_port}'!r}",
        f"c.ConfigurableHTTPProxy.command = [{plan.proxy!r}]",
        f"c.ConfigurableHTTPProxy.pid_file = {str(out / 'jupyterhub-proxy.pid')!r}",
        f"c.JupyterHub.pid_file = {str(out / 'jupyterhub.pid')!r}",
        f"c.JupyterHub.db_url = {'sqlite:///' + str(out / 'jupyterhub.sqlite')!r}",
        f"c.JupyterHub.cookie_secret_file = {str(out / 'jupyterhub_cookie_secret')!r}",
        "",
        *(_lti_lines() if plan.lti else _pam_lines(plan)),
        "",
        "# Each user's JupyterLab runs as their account, from the course's environment.",
        'c.JupyterHub.spawner_class = "localprocess"',
        f"c.Spawner.cmd = [{str(venv_bin / 'jupyterhub-singleuser')!r}]",
        'c.Spawner.default_url = "/lab"',
        'c.Spawner.env_keep = ["LANG", "LC_ALL"]',
        f"c.Spawner.environment = {environment!r}",
        f"c.Spawner.start_timeout = {HUB.start_timeout}",
        f"c.Spawner.http_timeout = {HUB.start_timeout}",
        "",
        "",
        "def per_user(spawner):",
        '    """The instructor gets the course (formgrader) and the shared exchange; students',
        '    their configuration, which they cannot write (their home keeps their own)."""',
        "    if spawner.user.name == INSTRUCTOR:",
        "        spawner.notebook_dir = COURSE",
        "        extra = {",
        '            "JUPYTER_CONFIG_PATH": INSTRUCTOR_CONFIG,',
        f"            {EXCHANGE_ENV!r}: EXCHANGE,",
        "        }",
        "    else:",
        '        extra = {"JUPYTER_CONFIG_PATH": STUDENT_CONFIG}',
        "    spawner.environment = {**spawner.environment, **extra}",
        "",
        "",
        "c.Spawner.pre_spawn_hook = per_user",
        "",
        "# Hub services and their roles.",
        f"c.JupyterHub.services = {pprint.pformat(list(plan.services), width=90)}",
        f"c.JupyterHub.load_roles = {pprint.pformat(list(plan.roles), width=90)}",
    ]
    if plan.checks_port is not None:
        from attention_course.integrations.hub_check import hub_config_lines

        program = plan.venv / "bin" / "attention-course"
        lines += ["", *hub_config_lines(program, plan.checks_port)]
    if plan.extra_lines:
        lines += ["", "# Added for this course.", *plan.extra_lines]
    return "\n".join(lines) + "\n"


def _pam_lines(plan: HubPlan) -> list[str]:
    return [
        "# Local accounts, with their own passwords (PAM); only the course's.",
        'c.JupyterHub.authenticator_class = "pam"',
        f"c.Authenticator.allowed_users = {_set_text([plan.instructor, *plan.students])}",
    ]


LTI_AUTHENTICATOR = "attention_course.integrations.lms.hub_auth.CourseLTI13Authenticator"


def _lti_lines() -> list[str]:
    return [
        "# LTI 1.3 launches from the course's LMS, its platform in course.toml's [lms]: a",
        "# student's account is made at their first launch; an instructor's role in the LMS",
        "# course gives the instructor's account. No passwords.",
        f"c.JupyterHub.authenticator_class = {LTI_AUTHENTICATOR!r}",
        "c.CourseLTI13Authenticator.course = COURSE",
        "c.CourseLTI13Authenticator.instructor = INSTRUCTOR",
    ]


def _set_text(names: Sequence[str]) -> str:
    """A set of strings as Python text, in sorted order (a set's repr varies from run to run)."""
    return "{" + ", ".join(repr(name) for name in sorted(set(names))) + "}"


# ---- the environment


def jupyterhub_requirement() -> str:
    """JupyterHub pinned to the version of this environment (the one it was tested with),
    else the default range."""
    try:
        return f"jupyterhub=={metadata.version('jupyterhub')}"
    except metadata.PackageNotFoundError:
        return HUB.jupyterhub


def lti_requirements() -> list[str]:
    """The `lti` extra's libraries, pinned to this environment's versions where it has them."""
    found = []
    for name in LTI_PACKAGES:
        try:
            found.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return found


# The `lti` extra (pyproject.toml): the hub's LTI 1.3 launches and `lms push`.
LTI_PACKAGES = ("jupyterhub-ltiauthenticator", "pylti1p3next")


# In an environment this command made: the interpreter it was made with, and whether its
# installation finished. One the command made that did not finish (a failure, a kill), or one
# asked for with another --python, is made again; one it did not make is only ever added to.
MADE_FILE = "attention-course-hub.json"


def _made_by_us(venv: Path) -> dict | None:
    try:
        made = json.loads((venv / MADE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return made if isinstance(made, dict) else None


def _stale(venv: Path, python: str | None) -> str:
    """Why the environment at `venv` must be made again ("" when it may be used as it is)."""
    made = _made_by_us(venv)
    if made is None:
        return ""  # none, or not ours: used as it is (never removed)
    if not made.get("complete"):
        return "an earlier run did not finish it"
    if python is not None and made.get("python") != str(Path(python).absolute()):
        return f"it was made with {made.get('python')}, not {python}"
    if not (venv / "bin" / "python").exists():
        return "its interpreter is gone"
    return ""


def install_environment(venv: Path, python: str | None = None, lti: bool = False) -> Path:
    """Make `venv` (with `python`) and pip-install this package's wheel and JupyterHub into it
    (with `lti`, the `lti` extra too), readable by every account; returns its jupyterhub
    program. It can be run again after any failure or kill, with other options: an
    environment it made and did not finish, or made with another `python`, is made again."""
    why = _stale(venv, python)
    if why:
        print(f"{venv}: made again ({why})", flush=True)
        shutil.rmtree(venv)
    if not (venv / "bin" / "python").exists():
        interpreter = str(python or getattr(sys, "_base_executable", sys.executable))
        venv.mkdir(parents=True, exist_ok=True)
        made = {"python": str(Path(interpreter).absolute()), "complete": False}
        (venv / MADE_FILE).write_text(json.dumps(made) + "\n")
        _run([interpreter, "-m", "venv", str(venv)], f"{interpreter} -m venv {venv}")
        venv.chmod(FOLDER_MODE)
    _check_everybody_can_run(venv / "bin" / "python")
    with tempfile.TemporaryDirectory(prefix="attention-hub-wheel-") as folder:
        wheel = build_wheel(Path(folder))
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        pip.append("--disable-pip-version-check")
        same = installed_already(venv, wheel)
        extra = lti_requirements() if lti else []
        if lti:  # (an engine installed already gets the extra's libraries)
            extra.append(f"{wheel}[lti]")
        elif not same:
            extra.append(str(wheel))
        _run([*pip, jupyterhub_requirement(), *extra], f"pip in {venv}")
        if not same and not installed_already(venv, wheel):
            # pip keeps an installed engine of the same version, whatever its files
            _run([*pip, "--no-deps", "--force-reinstall", str(wheel)], f"pip in {venv}")
            if not installed_already(venv, wheel):
                raise UserError(f"{venv}: the engine installed there is not this one's wheel")
    ours = _made_by_us(venv)
    if ours is not None:
        (venv / MADE_FILE).write_text(json.dumps({**ours, "complete": True}) + "\n")
    return venv / "bin" / "jupyterhub"


def _package_files(record: str) -> set[str]:
    """The package's files with their hashes, as a RECORD lists them."""
    return {
        line
        for line in record.splitlines()
        if line.startswith("attention_course/") and ",sha256=" in line
    }


def installed_already(venv: Path, wheel: Path) -> bool:
    """The environment holds exactly the wheel's files (same names, same hashes)."""
    installed = sorted(venv.glob("lib/python3*/site-packages/attention_course-*.dist-info"))
    if len(installed) != 1 or not (installed[0] / "RECORD").is_file():
        return False
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        wanted = _package_files(archive.read(name).decode())
    return wanted == _package_files((installed[0] / "RECORD").read_text())


def _run(argv: Sequence[str], what: str) -> None:
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=PIP_TIMEOUT, umask=0o022
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"{what}: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["failed"]
        raise UserError(f"{what}: {last[0]}")


def _check_everybody_can_run(program: Path) -> None:
    """UserError unless every account can run `program` (and reach the interpreter it links to)."""
    target = program.resolve()
    for path in (program.absolute(), target):
        blocked = [p for p in path.parents if not p.stat().st_mode & stat.S_IXOTH]
        if blocked or not path.stat().st_mode & stat.S_IXOTH:
            where = blocked[-1] if blocked else path
            raise UserError(
                f"{program}: other accounts cannot run it ({where} is closed to them): "
                "run the command again with --python and an interpreter outside any private "
                "folder (an environment the command made is then made again)"
            )


def hub_command(plan: HubPlan) -> str:
    """The command that starts the hub (as root: it starts each user's server as them)."""
    return f"{plan.venv / 'bin' / 'jupyterhub'} -f {plan.config_file}"


PROXY_PACKAGE = "configurable-http-proxy"
PROXY_FOLDER = "share/attention-course/proxy"  # in the environment: the proxy's copy


def _proxy_package(program: str) -> Path | None:
    """The npm package folder of the proxy program (None: not an npm package's program)."""
    found = Path(program).resolve()
    package = next(
        (p for p in found.parents if (p / "package.json").is_file() and p.name == PROXY_PACKAGE),
        None,
    )
    return package if package is not None and package.parent.name == "node_modules" else None


def proxy_copy(program: str, venv: Path) -> str:
    """Where `install_proxy` puts the proxy program in the environment (`program` itself when
    it is not an npm package's)."""
    package = _proxy_package(program)
    if package is None:
        return program
    found = Path(program).resolve()
    return str(venv / PROXY_FOLDER / "node_modules" / found.relative_to(package.parent))


def install_proxy(program: str, venv: Path) -> str:
    """The proxy the hub runs, copied into the environment when it is an npm package's program
    (with the packages it needs), so that the hub depends on nothing outside it (not the
    checkout the command ran from); another program is used where it is. Returns its path."""
    package = _proxy_package(program)
    if package is None:
        return program
    modules = package.parent
    target = venv / PROXY_FOLDER / "node_modules"
    todo, seen = [package], set()
    while todo:
        folder = todo.pop()
        if folder in seen:
            continue
        seen.add(folder)
        try:
            needs = json.loads((folder / "package.json").read_text()).get("dependencies") or {}
        except (OSError, ValueError):
            raise UserError(f"{folder}: not readable as an npm package") from None
        for name in needs:
            where = [folder / "node_modules" / name, modules / name]
            found_dep = next((p for p in where if (p / "package.json").is_file()), None)
            if found_dep is None:
                raise UserError(f"{program}: its package {name} is missing (npm install again)")
            todo.append(found_dep)
    if target.exists():
        shutil.rmtree(target)
    for folder in sorted(seen):
        copy = target / folder.relative_to(modules)
        if not copy.exists():
            shutil.copytree(folder, copy, symlinks=True)
    for made in (venv / PROXY_FOLDER, *(p for p in target.rglob("*") if p.is_dir()), target):
        made.chmod(made.stat().st_mode | 0o555)
    return proxy_copy(program, venv)


def which_proxy(proxy: str) -> str:
    """The proxy program's absolute path (UserError if it is not found)."""
    found = proxy if os.sep in proxy else shutil.which(proxy)
    if found is None or not os.access(found, os.X_OK):
        raise UserError(
            f"{proxy}: configurable-http-proxy not found (npm install configurable-http-proxy; "
            "or --proxy PATH)"
        )
    return str(Path(found).absolute())
