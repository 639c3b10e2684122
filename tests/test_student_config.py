"""The students' Jupyter configuration (JupyterLab shows it in tests/browser/test_student.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from attention_course.integrations.student_config import (
    INSTRUCTOR_PLUGINS,
    course_settings,
    write_student_config,
)


def test_student_config_turns_off_instructor_tools_and_names_the_exchange(tmp_path):
    files = write_student_config(tmp_path / "cfg", "a-course", "/srv/exchange")
    data = {p.relative_to(tmp_path / "cfg").as_posix(): json.loads(p.read_text()) for p in files}
    extensions = data["jupyter_server_config.json"]["ServerApp"]["jpserver_extensions"]
    assert extensions["nbgrader.server_extensions.formgrader"] is False
    assert extensions["nbgrader.server_extensions.course_list"] is False
    assert extensions["attention_course.integrations.jupyter_validate"] is True
    disabled = data["labconfig/page_config.json"]["disabledExtensions"]
    assert {p for p, off in disabled.items() if off} == set(INSTRUCTOR_PLUGINS)
    assert "@jupyter/nbgrader:formgrader" in disabled
    assert "@jupyter/nbgrader:create-assignment" in disabled
    assert data["nbgrader_config.json"] == {
        "CourseDirectory": {"course_id": "a-course"},
        "Exchange": {"root": "/srv/exchange"},
    }


def test_student_config_defaults_to_the_courses_settings(tmp_path):
    course_id, exchange = course_settings()
    write_student_config(tmp_path)
    nbgrader = json.loads((tmp_path / "nbgrader_config.json").read_text())
    assert nbgrader == {"CourseDirectory": {"course_id": course_id}, "Exchange": {"root": exchange}}


def test_the_jupyter_server_reads_it(tmp_path):
    write_student_config(tmp_path)
    env = {"JUPYTER_CONFIG_DIR": str(tmp_path), "PATH": ""}
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter_server", "extension", "list"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    listing = proc.stdout + proc.stderr
    section = listing.split(f"Config dir: {tmp_path}")[1].split("Config dir:")[0]
    assert re.search(r"nbgrader\.server_extensions\.formgrader \S*disabled", section), section
    assert re.search(r"attention_course\.jupyter_validate \S*enabled", section), section


def test_cli_writes_the_folder(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "student-config", str(tmp_path / "s")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"JUPYTER_CONFIG_DIR={tmp_path / 's'}" in proc.stdout
    assert (tmp_path / "s" / "labconfig" / "page_config.json").exists()
