"""One classification of every outcome of grading a submission: the student's, grading's, or
the infrastructure's.

- STUDENT: a score, or "not graded" with a reason the student can act on. Recorded with the
  submission's fingerprint: the next run leaves it alone until the submission changes.
- GRADING: a fault of grading (the graders, nbgrader, a grading process that died). Never
  recorded as final nor fingerprinted; said in one line, the run exits 1, the next run grades
  the submission again.
- TRANSIENT: a fault of the infrastructure that may pass (the gradebook's database does not
  answer, a connection was lost, the disk is full or failed). Tried again within the run with
  backoff (settings.RETRIES), then a fault of grading.

A database or disk error is never the student's. A failure nbgrader reports is the student's
only when its log says so in our words (a refused submission, a notebook that is not JSON, a
kernel that ran away); any other failure is grading's, and is told by the last exception of
nbgrader's log (its cause), not by nbgrader's last line about it. An exception in grading is
never the student's either: student code runs in the sandbox, and what it does comes back as
scores.

Whose is a timeout is decided by what was waited for (classgrade/waits.py): a submission's
deadline counts the time its grading works (the student's code in the sandbox, the graders),
never the time it waits on the gradebook or the disk, which is the infrastructure's; a wait past
the stall limit is a stall, TRANSIENT, said as a stall.

What the gradebook keeps of a submission's last grading (gradebook.Records) has a status: FINAL
ones (a score, or not graded with the student's reason) decide that the submission is unchanged;
the others mark its scores in the gradebook as not reliable (UNRELIABLE: being graded, or its
grading failed) until it is graded again.
"""

from __future__ import annotations

import errno
import re
import sys
import time
from collections.abc import Callable
from typing import TypeVar

from attention_course.errors import GradebookUnavailable
from attention_course.settings import RETRIES, Retries

STUDENT, GRADING, TRANSIENT = "student", "grading", "transient"
# The sides are names, not an order: code asks whether a side is among these.
RECORDED = frozenset({STUDENT})  # the student's: recorded (the others are faults)
RETRIED = frozenset({TRANSIENT})  # tried again within the run

# The statuses a record of the gradebook holds (jobs.Outcome's): final ones, and those that
# mark the scores the gradebook holds for the submission as not reliable.
FINAL = frozenset({"graded", "not graded"})
GRADING_NOW, FAILED = "grading", "error"
UNRELIABLE = frozenset({GRADING_NOW, FAILED})

T = TypeVar("T")

# What nbgrader's log (or a traceback) says when the gradebook's database failed.
DATABASE_MARKERS = (
    "error accessing the nbgrader database",  # nbgrader's words for any OperationalError
    "sqlalchemy.exc.",
    "(psycopg.",
    "psycopg.errors.",
    "psycopg.OperationalError",
    "sqlite3.OperationalError",
    "GradebookUnavailable: ",
)
GRADING_MARKERS = ("GradingError: ", "SandboxUnavailable: ")
# An OSError of these is the disk's (full, over quota, read-only, failing): the infrastructure's.
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})
# nbgrader's own exception that only points at the traceback above it (never the cause).
NBGRADER_POINTER = "Please see the the above traceback"
STUDENT_MARKERS = (
    "SubmissionRefused: ",
    "JSONDecodeError",
    "NotJSONError",
    "not valid JSON",
    "the kernel became unresponsive",
)


def tracebacks(text: str) -> list[tuple[list[str], str]]:
    """The tracebacks in a log, each as (its lines, its exception's line), nbgrader's own
    pointer to the traceback above it left out. Read as Python prints a traceback, in any
    indent (nbgrader's log indents it): after "Traceback (most recent call last):", its frames
    ("File ..." and their more indented lines), then the exception, less indented than them."""
    found: list[tuple[list[str], str]] = []
    lines = iter(text.splitlines())
    for line in lines:
        if "Traceback (most recent call last):" not in line:
            continue
        block, frame_indent = [line], None
        for inner in lines:
            stripped = inner.strip()
            if not stripped:
                continue
            block.append(inner)
            indent = len(inner) - len(inner.lstrip())
            if stripped.startswith('File "'):
                frame_indent = indent
            elif frame_indent is None or indent < frame_indent:
                if NBGRADER_POINTER not in stripped:
                    found.append((block, stripped))
                break
    return found


def last_exception(text: str) -> str:
    """The last exception of the tracebacks in a log, in one line ("OSError: [Errno 28] No
    space left on device"): the cause of a failure nbgrader reports; "" if none."""
    found = tracebacks(text)
    return one_line(found[-1][1]) if found else ""


def disk_fault(text: str) -> bool:
    """Whether a log's last exception is the disk's (DISK_ERRNOS)."""
    said = re.match(r"[\w.]*(?:Error|Exception): \[Errno (\d+)\]", last_exception(text))
    return said is not None and int(said.group(1)) in DISK_ERRNOS


def of_log(text: str) -> str:
    """The side of a failure nbgrader reported, from its log: a fault of the database or of
    the disk first (never the student's), then our graders' own faults, then what is the
    student's in our words; anything else is grading's."""
    if any(marker in text for marker in DATABASE_MARKERS) or disk_fault(text):
        return TRANSIENT
    if any(marker in text for marker in GRADING_MARKERS):
        return GRADING
    if any(marker in text for marker in STUDENT_MARKERS):
        return STUDENT
    return GRADING


def of_exception(exc: BaseException) -> str:
    """TRANSIENT for a fault of the database, of the network or of the disk, GRADING for any
    other."""
    if isinstance(exc, (GradebookUnavailable, ConnectionError, TimeoutError)):
        return TRANSIENT
    if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
        return TRANSIENT
    sa = sys.modules.get("sqlalchemy.exc")
    if sa is not None:
        if isinstance(exc, (sa.OperationalError, sa.InterfaceError, sa.DisconnectionError)):
            return TRANSIENT
        if isinstance(exc, sa.DBAPIError) and exc.connection_invalidated:
            return TRANSIENT
    pg = sys.modules.get("psycopg")
    if pg is not None and isinstance(exc, (pg.OperationalError, pg.InterfaceError)):
        return TRANSIENT
    sqlite = sys.modules.get("sqlite3")
    if sqlite is not None and isinstance(exc, sqlite.OperationalError):
        return TRANSIENT
    return GRADING


def of_reply(reply: dict) -> str:
    """The side of a grading job's reply (job.py; a Dask task's is the same): `side` when the
    job said, else a fault is grading's and anything else the student's."""
    if reply.get("graded"):
        return STUDENT
    return reply.get("side") or (GRADING if reply.get("fault") else STUDENT)


def one_line(text: str, limit: int = 300) -> str:
    return " ".join(text.split())[:limit]


def describe(exc: BaseException) -> str:
    """An exception in one line: the first line of its message (SQLAlchemy's carry a
    'Background on this error' line and the statement), without the driver's class name."""
    first = next((ln for ln in str(exc).splitlines() if ln.strip()), "") or type(exc).__name__
    for prefix in ("(psycopg.OperationalError) ", "(psycopg.InterfaceError) "):
        first = first.replace(prefix, "")
    if of_exception(exc) in RETRIED and not isinstance(exc, GradebookUnavailable):
        return one_line(f"the gradebook's database failed: {first}")
    return one_line(first)


def infrastructure_reason(text: str) -> str:
    """One line for a fault of the infrastructure nbgrader's log shows (TRANSIENT)."""
    if not any(marker in text for marker in DATABASE_MARKERS) and disk_fault(text):
        return f"the disk failed: {last_exception(text)}"
    return database_reason(text)


def database_reason(text: str) -> str:
    """One line for a database fault nbgrader's log shows: the driver's own words if there."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for marker in ("sqlalchemy.exc.", "psycopg.", "sqlite3.", "GradebookUnavailable: "):
        said = [ln for ln in lines if marker in ln]
        if said:
            line = said[-1].split(": ", 1)[-1] if ": " in said[-1] else said[-1]
            for prefix in ("(psycopg.OperationalError) ", "(psycopg.InterfaceError) "):
                line = line.replace(prefix, "")
            return one_line(f"the gradebook's database failed: {line}")
    return "the gradebook's database failed (nbgrader could not read or write it)"


def retrying(
    step: Callable[..., T],
    *args,
    retries: Retries = RETRIES,
    told: Callable[[BaseException, float], None] | None = None,
    **kwargs,
) -> T:
    """`step(*args, **kwargs)`, tried again after a transient fault (`retries`: how often and
    how long to wait; `told(exc, seconds)` before each wait). The last fault is raised as it
    is; any other exception at once."""
    attempt = 0
    while True:
        try:
            return step(*args, **kwargs)
        except Exception as exc:
            attempt += 1
            if of_exception(exc) not in RETRIED or attempt > retries.attempts:
                raise
            delay = retries.delay(attempt)
            if told is not None:
                told(exc, delay)
            time.sleep(delay)
