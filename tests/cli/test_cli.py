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
    "similarity",
    "gradescope",
    "doctor",
    "demo",
    "student-config",
    "jupyterhub",
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
        (["autograde", "attention_basics", "--jobs", "0"], "--jobs: 0 is not 1 or more"),
        (["autograde", "attention_basics", "--jobs", "-3"], "--jobs: -3 is not 1 or more"),
        (["autograde", "attention_basics", "--jobs", "two"], "'two' is not a whole number"),
        (["autograde"], "the following arguments are required: ASSIGNMENT"),
        (["autograde", "attention_basics", "--no-such-option"], "unrecognized arguments"),
        (["quiz", "export", "q", "--format", "gift", "--variants", "0"], "0 is not 1 or more"),
        (
            ["scores", "attention_basics", "--db", "sqlite:////mistyped/path.db"],
            "no gradebook at /mistyped/path.db",
        ),
        (["doctor", "--course", "NOWHERE"], "NOWHERE is not a course folder"),
        (
            ["jupyterhub", "--out", "/nonexistent/hub", "--venv", "/nonexistent/venv"]
            + ["--exchange", "/nonexistent/x", "--instructor", "no-such-account"]
            + ["--students", "a"],
            "no-such-account: no such local account (useradd it first)",
        ),
        (["similarity", "no_such_assignment"], "unknown assignment 'no_such_assignment'"),
        (["similarity", "attention_basics", "--course", "NOWHERE"], "is not a course folder"),
        (["similarity", "attention_quiz"], "the graded quiz: it has no code to compare"),
        (["similarity", "attention_basics", "--threshold", "2"], "2 is not between 0 and 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    proc = cli(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr  # the line that matters, no usage first
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_an_argument_error_names_the_command_and_its_help():
    proc = cli("autograde", "attention_basics", "--jobs", "0")
    assert proc.stderr.startswith("attention-course autograde: error: argument --jobs")
    assert proc.stderr.rstrip().endswith("(see attention-course autograde --help)")
