"""The students' Jupyter configuration (JupyterLab shows it in tests/browser/test_student.py;
tests/deploy/test_student_jupyter.py runs it as students do, from a folder they cannot write)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from attention_course.integrations.student_config import course_settings, write_student_config

# nbgrader's JupyterLab plugins, by what they are for: the instructor's tools (students must not
# see them) and the students' own (which must stay on). Typed here, not read from the engine.
INSTRUCTORS = {
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
}
STUDENTS = {"@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:validate-assignment"}
# JupyterLab's own plugin that asks every student about Jupyter's news (and checks for updates).
NEWS = "@jupyterlab/apputils-extension:announcements"


def lab_plugins() -> set[str]:
    """The plugin ids JupyterLab's installed application declares (in its JavaScript)."""
    static = Path(sys.prefix) / "share" / "jupyter" / "lab" / "static"
    found = set()
    for script in static.glob("*.js"):
        found |= set(re.findall(r"id:\"(@jupyterlab/[a-z-]+:[a-z-]+)\"", script.read_text()))
    return found


def installed_plugins() -> set[str]:
    """The plugin ids nbgrader's installed lab extension declares (in its JavaScript)."""
    folder = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader"
    found = set()
    for script in (folder / "static").glob("*.js"):
        found |= set(re.findall(r"[\"'](@jupyter/nbgrader:[a-z-]+)[\"']", script.read_text()))
    return found


def test_the_plugins_named_are_nbgraders_and_jupyterlabs_own():
    assert INSTRUCTORS | STUDENTS <= installed_plugins()
    assert NEWS in lab_plugins()


def test_student_config_turns_off_instructor_tools_and_names_the_exchange(tmp_path):
    files = write_student_config(tmp_path / "cfg", "a-course", "/srv/exchange")
    data = {p.relative_to(tmp_path / "cfg").as_posix(): json.loads(p.read_text()) for p in files}
    extensions = data["jupyter_server_config.json"]["ServerApp"]["jpserver_extensions"]
    assert extensions["nbgrader.server_extensions.formgrader"] is False
    assert extensions["nbgrader.server_extensions.course_list"] is False
    assert extensions["attention_course.integrations.jupyter_validate"] is True
    assert extensions["attention_course.integrations.jupyter_assignments"] is True
    disabled = data["labconfig/page_config.json"]["disabledExtensions"]
    assert {p for p, off in disabled.items() if off} == INSTRUCTORS | {NEWS}
    assert data["nbgrader_config.json"] == {
        "CourseDirectory": {"course_id": "a-course"},
        "Exchange": {"root": "/srv/exchange"},
    }


def test_student_config_defaults_to_the_courses_settings(tmp_path):
    course_id, exchange = course_settings()
    write_student_config(tmp_path)
    nbgrader = json.loads((tmp_path / "nbgrader_config.json").read_text())
    assert nbgrader == {"CourseDirectory": {"course_id": course_id}, "Exchange": {"root": exchange}}


# What the server, JupyterLab and nbgrader make of their configuration (the server's own
# search for extensions, as `jupyter lab` starts it; `jupyter server extension list` shows only
# the user, environment and system folders, never JUPYTER_CONFIG_PATH's).
PROBE = """
import json
from jupyter_server.serverapp import ServerApp
from jupyterlab_server.config import get_static_page_config
from nbgrader.apps.baseapp import NbGrader

server = ServerApp()
server.find_server_extensions()
nbgrader = NbGrader()
nbgrader.load_config_file()
print(json.dumps({
    "extensions": server.jpserver_extensions,
    "disabled": get_static_page_config().get("disabledExtensions", {}),
    "nbgrader": [nbgrader.config.CourseDirectory.course_id, nbgrader.config.Exchange.root],
}))
"""


def test_the_server_lab_and_nbgrader_read_it_on_the_config_path(tmp_path):
    config = tmp_path / "student-jupyter"
    write_student_config(config, "a-course", "/srv/exchange")
    own = tmp_path / "home" / ".jupyter"  # the student's own, writable configuration
    env = {"JUPYTER_CONFIG_PATH": str(config), "JUPYTER_CONFIG_DIR": str(own), "PATH": ""}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    found = json.loads(proc.stdout.splitlines()[-1])
    assert found["extensions"]["nbgrader.server_extensions.formgrader"] is False
    assert found["extensions"]["nbgrader.server_extensions.course_list"] is False
    assert found["extensions"]["nbgrader.server_extensions.assignment_list"] is True
    assert found["extensions"]["attention_course.integrations.jupyter_validate"] is True
    assert found["extensions"]["attention_course.integrations.jupyter_assignments"] is True
    off = {p for p, off in found["disabled"].items() if off}
    assert off >= INSTRUCTORS | {NEWS} and not off & STUDENTS
    assert found["nbgrader"] == ["a-course", "/srv/exchange"]
    assert not own.exists()  # read from the config path, nothing written for it


def test_everybody_can_read_it_whatever_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        files = write_student_config(tmp_path / "srv" / "student-jupyter", "c", "/x")
    finally:
        os.umask(old)
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    for folder in (tmp_path / "srv", tmp_path / "srv" / "student-jupyter", files[1].parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755, folder


def test_cli_writes_the_folder(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "student-config", str(tmp_path / "s")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"JUPYTER_CONFIG_PATH={tmp_path / 's'} jupyter lab" in proc.stdout
    assert "JUPYTER_CONFIG_DIR" not in proc.stdout
    assert (tmp_path / "s" / "labconfig" / "page_config.json").exists()
