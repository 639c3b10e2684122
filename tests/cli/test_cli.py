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


def _course_copy(tmp_path):
    from attention_course.classgrade.nbgrader_api import copy_course
    from tests.course import COURSE_ROOT

    return copy_course(tmp_path / "course", COURSE_ROOT)


def test_a_report_folder_that_cannot_be_written_is_one_line(tmp_path):
    """`similarity --out` where no folder can be made (under a file): one line naming the
    cause, exit 2, no traceback, nothing written."""
    from tests.similarity import realistic

    root = _course_copy(tmp_path)
    stubs = realistic.released_stubs(root)
    realistic.write_cells(
        root, {s: realistic.cells_of(s, stubs) for s in ("amara", "bilal", "chen")}
    )
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    proc = cli("similarity", "attention_basics", "--course", str(root), "--out", str(blocker / "r"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if "error" in x]
    assert line.startswith("attention-course: error: cannot write the report: ")
    assert proc.stdout == ""


def test_helpers_given_as_one_name_are_that_helper_or_refused(tmp_path):
    """course.toml's `helpers = "softmax"` (a string where a list is meant) is the helper
    softmax, or refused in one line naming the key; never seven one-letter helpers."""
    from attention_course.course import Course
    from attention_course.errors import UserError

    root = _course_copy(tmp_path)
    toml = root / "course.toml"
    text = toml.read_text()
    listed = 'helpers = ["softmax", "scaled_dot_product_attention", "causal_mask"]'
    assert listed in text
    toml.unlink()  # a copy of its own, not the repository's (the copy may link to it)
    toml.write_text(text.replace(listed, 'helpers = "softmax"'))
    try:
        course = Course.load(root)
    except (UserError, ValueError) as exc:
        assert "helpers" in str(exc)
        proc = cli("similarity", "masks_and_heads", "--course", str(root))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1 and "helpers" in proc.stderr, proc.stderr
    else:
        assert course.assignments["masks_and_heads"].helpers == ("softmax",)
