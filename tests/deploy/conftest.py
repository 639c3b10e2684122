"""The engine as users deploy it: its wheel, pip-installed (not editable) into a fresh virtual
environment, and an ordinary Linux account. Shared by the session (the venv takes a minute).

Processes run through `engine_venv.run` see the venv's binaries first on PATH, no PYTHONPATH
and a temporary working folder: never this checkout, never the developer's .venv.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = "attention-deploy"
# The interpreter the venvs are made from: the system's (readable by every account), else the
# one this Python is a venv of.
BASE_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys._base_executable


def clean_env(**more: str) -> dict[str, str]:
    """This process's environment without anything that points at the checkout or its venv."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "ATTENTION_COURSE_DIR")
    }
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    env.update(more)
    return env


@dataclass(frozen=True)
class Venv:
    path: Path
    workdir: Path  # the working folder of `run` (a temporary folder, not the checkout)

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    @property
    def site_packages(self) -> Path:
        (found,) = self.path.glob("lib/python3*/site-packages")
        return found

    def env(self, **more: str) -> dict[str, str]:
        return clean_env(
            PATH=f"{self.path / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            VIRTUAL_ENV=str(self.path),
            **more,
        )

    def run(self, *args, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
        """Run a command of the venv (`run("attention-course", "check", ...)`; a first
        argument naming one of the venv's binaries is that binary)."""
        argv = [str(a) for a in args]
        if self.bin(argv[0]).exists():
            argv[0] = str(self.bin(argv[0]))
        kw.setdefault("cwd", self.workdir)
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        kw.setdefault("timeout", 900)
        return subprocess.run(argv, env=self.env(**(env or {})), **kw)


def make_venv(path: Path, *requirements: str) -> None:
    """A fresh venv at `path` with `requirements` pip-installed (pip's ordinary index)."""
    subprocess.run([BASE_PYTHON, "-m", "venv", str(path)], check=True, env=clean_env())
    proc = subprocess.run(
        [str(path / "bin" / "python"), "-m", "pip", "install", "-q", *requirements],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.fixture(scope="session")
def engine_wheel(tmp_path_factory) -> Path:
    """The engine's wheel, built by pip from the checkout's packaging files. (pip builds a
    local project in place, writing build/ beside it: the build runs on a copy of
    pyproject.toml, README.md and attention_course/, so the repository stays untouched.)"""
    base = tmp_path_factory.mktemp("engine-wheel")
    project = base / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, project / name)
    shutil.copytree(
        REPO_ROOT / "attention_course",
        project / "attention_course",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    out = base / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(project)],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = out.glob("attention_course-*.whl")
    return wheel


@pytest.fixture(scope="session")
def engine_venv(engine_wheel) -> Venv:
    """A fresh venv under /tmp (mode 0755) with the engine's wheel installed, not editable."""
    base = Path(tempfile.mkdtemp(prefix="attention-engine-venv-"))
    base.chmod(0o755)
    work = base / "work"
    work.mkdir()
    work.chmod(0o777)
    venv = Venv(base / "venv", work)
    make_venv(venv.path, str(engine_wheel))
    check = venv.run("python", "-c", "import attention_course; print(attention_course.__file__)")
    assert check.returncode == 0, check.stderr
    assert Path(check.stdout.strip()).is_relative_to(venv.site_packages), check.stdout
    yield venv
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def account():
    """An ordinary Linux account (created for the session if it is not there; needs root)."""
    if os.geteuid() != 0:
        pytest.skip("creating an account needs root")
    created = False
    try:
        pwd.getpwnam(ACCOUNT)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", ACCOUNT], check=True)
        created = True
    yield pwd.getpwnam(ACCOUNT)
    if created:
        subprocess.run(["userdel", ACCOUNT], check=False)
