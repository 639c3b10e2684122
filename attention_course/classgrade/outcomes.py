"""One classification of every outcome of grading a submission: the student's, grading's, or
the infrastructure's.

- STUDENT: a score, or "not graded" with a reason the student can act on. Recorded with the
  submission's fingerprint: the next run leaves it alone until the submission changes.
- GRADING: a fault of grading (the graders, nbgrader, a grading process that died). Never
  recorded as final nor fingerprinted; said in one line, the run exits 1, the next run grades
  the submission again.
- TRANSIENT: a fault of the infrastructure that may pass (the gradebook's database does not
  answer, a connection was lost). Tried again within the run with backoff (settings.RETRIES),
  then a fault of grading.

A database error is never the student's. A failure nbgrader reports is the student's only when
its log says so in our words (a refused submission, a notebook that is not JSON, a kernel that
ran away); any other failure is grading's. An exception in grading is never the student's
either: student code runs in the sandbox, and what it does comes back as scores.
"""

from __future__ import annotations

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
STUDENT_MARKERS = (
    "SubmissionRefused: ",
    "JSONDecodeError",
    "NotJSONError",
    "not valid JSON",
    "the kernel became unresponsive",
)


def of_log(text: str) -> str:
    """The side of a failure nbgrader reported, from its log: a database fault first (never
    the student's), then our graders' own faults, then what is the student's in our words;
    anything else is grading's."""
    if any(marker in text for marker in DATABASE_MARKERS):
        return TRANSIENT
    if any(marker in text for marker in GRADING_MARKERS):
        return GRADING
    if any(marker in text for marker in STUDENT_MARKERS):
        return STUDENT
    return GRADING


def of_exception(exc: BaseException) -> str:
    """TRANSIENT for a fault of the database or of the network, GRADING for any other."""
    if isinstance(exc, (GradebookUnavailable, ConnectionError, TimeoutError)):
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
