"""Whose a failure nbgrader reports is, and in which words (classgrade/outcomes.py): its cause is
the last exception of its log, read from tracebacks as Python prints them and as nbgrader's log
indents them; a full or failing disk is the infrastructure's, as a database fault is."""

from __future__ import annotations

import errno
import os
import traceback

import pytest

from attention_course.classgrade import outcomes
from attention_course.classgrade.nbgrader_api import failure_reason

POINTER = (
    "Please see the the above traceback for details on the specific errors on the above failures."
)


def _traceback_of(exc: BaseException) -> str:
    """The traceback Python prints for `exc`, raised from a function (its frames real)."""

    def fail() -> None:
        raise exc

    try:
        fail()
    except BaseException:  # noqa: BLE001
        return traceback.format_exc()
    raise AssertionError("unreachable")


def _as_nbgrader_logs(text: str) -> str:
    """A traceback as nbgrader's log holds it: its first line after the level, the others
    indented by four."""
    first, *rest = text.splitlines()
    return "\n".join([f"[ERROR] {first}", *("    " + line for line in rest)])


def _nbgrader_log(cause: BaseException) -> str:
    """What nbgrader's autograde gives when a submission's processing raised `cause`: its log
    (its own lines, the cause's traceback indented) and its error (its pointer exception)."""
    pointer = _traceback_of(RuntimeError(POINTER)).replace(
        "RuntimeError:", "nbgrader.converters.base.NbGraderException:"
    )
    return (
        "[WARNING] Attribute 'checksum' for cell softmax_tests has changed!\n"
        "[ERROR] There was an error processing assignment: /course/submitted/s01/a1\n"
        + _as_nbgrader_logs(_traceback_of(cause))
        + "\n[WARNING] Removing failed assignment: /course/autograded/s01/a1\n"
        "[ERROR] There was an error processing assignment 'a1' for student 's01'\n"
        f"[ERROR] {POINTER}\n" + pointer
    )


def test_the_cause_is_the_last_exception_not_nbgraders_line_about_it():
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    log = _nbgrader_log(full)
    assert outcomes.last_exception(log) == "OSError: [Errno 28] No space left on device"
    assert failure_reason({"log": log}) == (
        "not graded: OSError: [Errno 28] No space left on device"
    )
    assert outcomes.of_log(log) == outcomes.TRANSIENT  # the disk's: the infrastructure's
    assert outcomes.infrastructure_reason(log) == (
        "the disk failed: OSError: [Errno 28] No space left on device"
    )
    lines, said = outcomes.tracebacks(log)[-1]
    assert said == "OSError: [Errno 28] No space left on device"
    assert "Traceback (most recent call last):" in lines[0] and len(lines) >= 4


@pytest.mark.parametrize(
    "code, whose",
    [
        (errno.ENOSPC, outcomes.TRANSIENT),
        (errno.EDQUOT, outcomes.TRANSIENT),
        (errno.EROFS, outcomes.TRANSIENT),
        (errno.EIO, outcomes.TRANSIENT),
        (errno.EACCES, outcomes.GRADING),  # a permission: the set-up's, not a failing disk
        (errno.ENOENT, outcomes.GRADING),
    ],
)
def test_a_disk_that_is_full_or_fails_is_the_infrastructures_and_other_os_errors_gradings(
    code, whose
):
    exc = OSError(code, os.strerror(code))
    assert outcomes.of_log(_nbgrader_log(exc)) == whose
    assert outcomes.of_exception(exc) == whose


def test_a_chained_exception_gives_the_last_one_and_a_log_without_any_gives_nothing():
    def chained() -> None:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise ValueError("outer: the grade cell has no points") from inner

    try:
        chained()
    except ValueError:
        text = traceback.format_exc()
    assert outcomes.last_exception(text) == "ValueError: outer: the grade cell has no points"
    assert outcomes.last_exception(_as_nbgrader_logs(text)) == (
        "ValueError: outer: the grade cell has no points"
    )
    assert outcomes.last_exception("[ERROR] something failed\n") == ""
    assert failure_reason({"log": "[ERROR] something failed\n"}) == (
        "not graded: [ERROR] something failed"
    )


def test_a_database_fault_is_said_as_the_databases_even_with_a_disk_error_beside_it():
    """nbgrader's words for a database error come first: a disk error in the same log (an
    earlier traceback) does not make it the disk's."""
    log = _nbgrader_log(OSError(errno.ENOSPC, "No space left on device")) + (
        "\n[ERROR] There was an error accessing the nbgrader database.\n"
        "sqlalchemy.exc.OperationalError: (psycopg.OperationalError) server closed the "
        "connection unexpectedly\n"
    )
    assert outcomes.of_log(log) == outcomes.TRANSIENT
    assert outcomes.infrastructure_reason(log).startswith("the gradebook's database failed: ")
