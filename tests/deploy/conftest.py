"""Fixtures for tests that run what users run: this package built as a wheel and installed into
a fresh virtual environment (no checkout on sys.path), and ordinary Linux accounts to run its
commands as.

The wheel and the environment are made once per test run (by whichever xdist worker asks first,
tests/shared.py: the deploy modules run in several workers), each worker with a working folder
of its own. Commands run with the environment's own programs, from a temporary folder, with no
PYTHONPATH: what they import is what the wheel installed.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import shared
from tests.course import COURSE_ROOT

REPO_ROOT = COURSE_ROOT  # the checkout: what the wheel is built from, never on an import path

INSTALL_TIMEOUT = 1200  # seconds for pip to install the wheel and its dependencies
# What pip builds the wheel from: the project's metadata and the engine's package (never the
# course, which the wheel must not hold).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "attention_course")


def shared_folder(prefix: str) -> Path:
    """A new folder under /tmp that every account can read and enter (mode 0755), owned by the
    user running the tests. Not pytest's tmp_path: its folders are 0700."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o755)
    return folder


def clean_env(**extra: str) -> dict[str, str]:
    """An environment for a command of the installed package: no PYTHONPATH, no Jupyter
    variables of the test run, the system's PATH; plus `extra`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "ATTENTION_COURSE_DIR")
        and not key.startswith("JUPYTER")
    }
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    env.update(extra)
    return env


def _run(argv: list, cwd: Path, timeout: float, what: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        umask=0o022,  # readable by every account, whatever the test run's umask
    )
    assert proc.returncode == 0, f"{what} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="session")
def engine_wheel() -> Path:
    """This package's wheel, built by pip from a copy of what it is built from (setuptools
    writes build/ and *.egg-info/ into the folder it builds, and no test writes into the
    repository); once per run, removed when the run is over."""
    return shared.once("engine_wheel", build_wheel)


def build_wheel() -> Path:
    base = shared_folder("attention-wheel-")
    shared.at_end(base)
    source = base / "source"
    source.mkdir()
    for name in WHEEL_SOURCES:
        if (COURSE_ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(COURSE_ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy(COURSE_ROOT / name, source / name)
    wheels = base / "wheels"
    _run(
        [sys.executable, *"-m pip wheel --no-deps --disable-pip-version-check -q -w".split()]
        + [wheels, "."],
        source,
        600,
        "pip wheel",
    )
    (wheel,) = wheels.glob("attention_course-*.whl")
    return wheel


@dataclass(frozen=True)
class EngineVenv:
    """A fresh virtual environment with the wheel installed (not editable), and a working
    folder of its own for the commands run in it (never the checkout)."""

    path: Path
    workdir: Path

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def command(self, name: str) -> str:
        return str(self.bin(name))

    @property
    def site_packages(self) -> Path:
        (found,) = self.path.glob("lib/python3*/site-packages")
        return found

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of its commands: its bin first on PATH, nothing of the checkout."""
        path = f"{self.path / 'bin'}:/usr/local/bin:/usr/bin:/bin"
        return clean_env(PATH=path, VIRTUAL_ENV=str(self.path), **extra)

    def run(self, *args, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
        """Run a command of the venv (`run("attention-course", "check", ...)`: a first argument
        naming one of its programs is that program), in its working folder."""
        argv = [str(a) for a in args]
        if self.bin(argv[0]).exists():
            argv[0] = str(self.bin(argv[0]))
        kw.setdefault("cwd", self.workdir)
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        kw.setdefault("timeout", 900)
        return subprocess.run(argv, env=self.env(**(env or {})), **kw)


def _everybody_can_use(path: Path) -> bool:
    """Every account can reach `path` (each folder above it searchable by others) and read it
    (and run it, if it is a program or folder)."""
    path = path.resolve()
    folders_ok = all(p.stat().st_mode & stat.S_IXOTH for p in path.parents)
    return folders_ok and path.stat().st_mode & (stat.S_IROTH | stat.S_IXOTH) != 0


def python_for_everybody() -> str | None:
    """A Python this package supports that every account can run: a virtual environment's
    interpreter is a link to its base Python, which may sit in root's 0700 home (pyenv)."""
    candidates = [getattr(sys, "_base_executable", sys.executable), sys.executable]
    candidates += [shutil.which(n, path="/usr/local/bin:/usr/bin") for n in PYTHONS]
    for candidate in filter(None, candidates):
        try:
            found = subprocess.run(
                [candidate, "-c", PYTHON_PROBE], capture_output=True, text=True, timeout=60
            )
        except OSError:
            continue
        if found.returncode != 0:
            continue
        version, prefix, venv_ok = json.loads(found.stdout)
        usable = _everybody_can_use(Path(candidate)) and _everybody_can_use(Path(prefix))
        if tuple(version) >= (3, 11) and venv_ok and usable:
            return candidate
    return None


PYTHONS = ("python3", "python3.13", "python3.12", "python3.11")
PYTHON_PROBE = """
import importlib.util, json, sys
ok = all(importlib.util.find_spec(m) for m in ("venv", "ensurepip"))
print(json.dumps([sys.version_info[:2], sys.base_prefix, ok]))
"""


@pytest.fixture(scope="session")
def engine_venv(engine_wheel) -> Iterator[EngineVenv]:
    """A fresh virtual environment under /tmp (0755: other accounts can use it) with this
    package's wheel pip-installed, as a user installs it (once per run: the tests only run its
    programs), and a working folder of this process's own. Its base Python is one every
    account can run (skipped, saying why, if there is none)."""
    python = python_for_everybody()
    if python is None:
        pytest.skip(
            "no Python >= 3.11 with venv that every account can run (this one's base "
            f"interpreter, {getattr(sys, '_base_executable', sys.executable)}, is not)"
        )
    venv = shared.once("engine_venv", lambda: make_venv(python, engine_wheel))
    work = shared_folder("attention-work-")
    work.chmod(0o777)
    try:
        yield EngineVenv(venv, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def make_venv(python: str, wheel: Path) -> Path:
    base = shared_folder("attention-venv-")
    shared.at_end(base)
    venv = base / "venv"
    _run([python, "-m", "venv", venv], base, 300, f"{python} -m venv")
    _run(
        [venv / "bin" / "python", *"-m pip install -q --disable-pip-version-check".split()]
        + [wheel],
        base,
        INSTALL_TIMEOUT,
        "pip install of the wheel",
    )
    found = _run(
        [venv / "bin" / "python", "-c", "import attention_course as a; print(a.__file__)"],
        base,
        60,
        "importing the installed package",
    )
    assert found.stdout.strip().startswith(str(venv)), found.stdout
    return venv


@dataclass(frozen=True)
class Account:
    """An ordinary Linux account (no privileges, a group of its own) with its home folder."""

    name: str
    uid: int
    gid: int
    home: Path

    def env(self, **extra: str) -> dict[str, str]:
        """The account's login environment (HOME, USER, LOGNAME), plus `extra`."""
        return clean_env(HOME=str(self.home), USER=self.name, LOGNAME=self.name, **extra)

    def _as_account(self, kwargs: dict) -> dict:
        kwargs.setdefault("cwd", self.home)
        kwargs.setdefault("env", self.env())
        # extra_groups=[]: none of the test run's supplementary groups
        return dict(kwargs, user=self.uid, group=self.gid, extra_groups=[], umask=0o022)

    def run(self, argv: list, **kwargs) -> subprocess.CompletedProcess:
        """Run `argv` as the account (by default in its home, with its environment)."""
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        kwargs.setdefault("timeout", 300)
        return subprocess.run([str(a) for a in argv], **self._as_account(kwargs))

    def popen(self, argv: list, **kwargs) -> subprocess.Popen:
        """Start `argv` as the account (by default in its home, with its environment)."""
        return subprocess.Popen([str(a) for a in argv], **self._as_account(kwargs))


@pytest.fixture
def account() -> Iterator[Account]:
    """A new ordinary Linux account with its home in a temporary folder; removed afterwards
    (userdel -r). Needs root and useradd/userdel: skipped otherwise, saying which."""
    if os.geteuid() != 0:
        pytest.skip("making a Linux account needs root (run the tests as root, e.g. in CI)")
    tools = {
        name: shutil.which(name, path="/usr/sbin:/sbin:/usr/bin:/bin")
        for name in ("useradd", "userdel")
    }
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} missing: no Linux account can be made")
    base = shared_folder("attention-account-")
    name = "acstudent" + secrets.token_hex(3)
    home = base / "home"
    made = subprocess.run(
        [tools["useradd"], "--create-home", "--home-dir", str(home), "--user-group", name],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"useradd {name} failed: {made.stderr.strip()}")
    entry = pwd.getpwnam(name)
    try:
        yield Account(name, entry.pw_uid, entry.pw_gid, home)
    finally:
        removed = subprocess.run(
            [tools["userdel"], "--remove", name], capture_output=True, text=True
        )
        shutil.rmtree(base, ignore_errors=True)
        assert removed.returncode == 0, f"userdel {name}: {removed.stderr.strip()}"


# One check per assignment per CHECK_WINDOW seconds on the deploy tests' hub.
CHECK_WINDOW = 3600
# Its students: the first two for the grading service's own tests (test_hub_check.py), the third
# presses the Check button in Chromium (test_check_button.py), so neither spends the other's checks.
HUB_STUDENTS = 3


# The tests' one change to the hub the README deploys: it notices that its grading service
# died within a second rather than thirty (a managed service's process is polled at its
# spawner's default poll_interval, which no configuration reaches), so that the test that kills
# the service waits for it less. Users' servers keep the usual 30 s.
QUICK_RESTART = (
    "from jupyterhub.services.service import _ServiceSpawner",
    "_ServiceSpawner.poll_interval.default_value = 1",
    "c.Spawner.poll_interval = 30",
)


@pytest.fixture(scope="session")
def course_hub(engine_venv) -> Iterator[object]:
    """The course's JupyterHub, deployed once for the deploy tests as the README says
    (tests/deploy/hub.py), the course's grading service included (`--checks`), its limit in
    the course's course.toml (one check per assignment per CHECK_WINDOW). Each module's fixture
    starts, releases and stops what it needs on it."""
    from tests.deploy.hub import deploy_hub

    limits = f"per_day = 1\nwindow = {CHECK_WINDOW}"
    with deploy_hub(
        engine_venv, students=HUB_STUDENTS, hub_check=limits, extra_lines=QUICK_RESTART
    ) as deployment:
        assert deployment.plan.checks_port is not None, "the README's hub has no --checks"
        yield deployment
