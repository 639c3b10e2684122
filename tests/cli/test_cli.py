"""The command line: --help everywhere, one-line errors and exit code 2 on bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest

COMMANDS = [
    "release",
    "check",
    "autograde",
    "scores",
    "report",
    "gradescope",
    "doctor",
    "demo",
    "student-config",
    "quiz",
]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", *args], capture_output=True, text=True
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    proc = cli(command, "--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: attention-course " + command)


@pytest.mark.parametrize(
    "args, message",
    [
        (["release", "no_such_assignment"], "no assignment 'no_such_assignment'"),
        (["autograde", "attention_basics", "--student", "nobody"], "no submission in"),
        (["autograde", "no_such_assignment"], "unknown assignment"),
        (["scores", "no_such_assignment"], "unknown assignment"),
        (["no_such_command"], "invalid choice"),
        (["student-config", __file__], "exists and is not a folder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    proc = cli(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
