"""`attention-course lms`: help for every step, one-line errors (exit 2) for a course without
its [lms] table, a missing format, an unknown assignment, a roster without its column; the
tool's key made private and its public key printed."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from tests.course import COURSE_ROOT


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", *args], capture_output=True, text=True
    )


@pytest.fixture
def course(tmp_path: Path) -> Path:
    return copy_course(tmp_path / "course", COURSE_ROOT)


@pytest.mark.parametrize("step", ["keys", "push", "csv", "launches"])
def test_every_step_has_help(step):
    done = cli("lms", step, "--help")
    assert done.returncode == 0 and done.stdout.startswith(f"usage: attention-course lms {step}")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["push"], r"course\.toml has no \[lms\] table: declare the course's LTI 1\.3 platform"),
        (["push", "no_such"], "unknown assignment 'no_such'"),
        (["csv"], r"--format canvas or moodle \(or \[lms\] format in course\.toml\)"),
        (["csv", "--format", "excel"], "invalid choice: 'excel'"),
        (["csv", "--format", "canvas", "--roster", "missing.csv"], "missing.csv: not readable"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(course, args, said):
    done = cli("lms", *args, "--course", str(course))
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert re.search(said, done.stderr), done.stderr


def test_keys_are_made_private_once_and_the_public_key_printed(course):
    first = cli("lms", "keys", "--course", str(course))
    assert first.returncode == 0, first.stderr
    key = course / "lms" / "tool-key.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    jwk = json.loads(first.stdout[first.stdout.index("{") : first.stdout.index("}") + 1])
    assert jwk["kty"] == "RSA" and "d" not in jwk and "PRIVATE" not in first.stdout
    again = cli("lms", "keys", "--course", str(course))
    assert again.stdout.startswith("kept the tool's private key") and key.read_text()
    assert json.loads(again.stdout[again.stdout.index("{") : again.stdout.index("}") + 1]) == jwk


def test_launches_says_when_there_are_none(course):
    done = cli("lms", "launches", "--course", str(course))
    assert (done.returncode, done.stdout) == (0, "no launches yet\n")
