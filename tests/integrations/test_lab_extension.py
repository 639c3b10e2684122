"""The course's JupyterLab extension ("Check with the course's graders"): the prebuilt files the
package ships are what its sources build (scripts/build_labextension.py rebuilds them aside with
JupyterLab's builder, pinned by labextension/package-lock.json, and compares them file for file:
a build takes about a second), and the engine's own wheel installs them where JupyterLab finds
prebuilt extensions. That it loads and works: tests/deploy/test_check_button.py, through the
course's hub."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from attention_course.integrations.wheel import build_wheel
from tests.course import COURSE_ROOT

BUILD = COURSE_ROOT / "scripts" / "build_labextension.py"
BUILDER = COURSE_ROOT / ".venv" / "node_tools" / "labextension" / "node_modules" / "@jupyter"
BUILT = COURSE_ROOT / "attention_course" / "labextension"
PREFIX = "share/jupyter/labextensions/@attention-course/check/"


def test_the_committed_extension_is_what_its_sources_build():
    if not (BUILDER / "builder").is_dir():
        reason = f"{BUILDER / 'builder'} is missing (bash scripts/setup.sh installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    done = subprocess.run(
        [sys.executable, str(BUILD), "--check"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "is what labextension/ builds" in done.stdout


def test_the_engines_wheel_installs_the_extension_where_jupyterlab_finds_it(tmp_path):
    built = {
        p.relative_to(BUILT).as_posix(): p.read_bytes() for p in BUILT.rglob("*") if p.is_file()
    }
    assert "package.json" in built and any(n.startswith("static/remoteEntry.") for n in built)
    with zipfile.ZipFile(build_wheel(tmp_path)) as wheel:
        data = {
            name.split(PREFIX, 1)[1]: wheel.read(name)
            for name in wheel.namelist()
            if f".data/data/{PREFIX}" in name
        }
        packaged = {
            name.split("attention_course/labextension/", 1)[1]: wheel.read(name)
            for name in wheel.namelist()
            if name.startswith("attention_course/labextension/")
        }
    assert data == built  # where JupyterLab looks: {prefix}/share/jupyter/labextensions
    assert packaged == built  # in the package too, for an installed engine's own wheel
