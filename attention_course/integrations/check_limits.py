"""The checks students ask of the hidden graders before the deadline: the limit per student per
assignment, the due-date policy, the fair queue, and the record of every check.

The records are a table of their own (settings.HUB_CHECK.table) in the course's gradebook
database, the SQLite file or PostgreSQL database the class run grades into, made when missing.
A check counts against its student's limit for `window` seconds from when it was asked, unless
grading failed it (not the student's fault). A reservation (count, then insert) is one
transaction: SQLite's `BEGIN IMMEDIATE`, PostgreSQL's advisory lock on the student, so two
requests at once never both take the last check.
"""

from __future__ import annotations

import collections
import contextlib
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from attention_course import course_schema
from attention_course.classgrade import gradebook
from attention_course.errors import UserError
from attention_course.settings import AFTER_DUE, HUB_CHECK, HubCheck

# A check's states: waiting in the queue, being graded, graded, rejected (the student's
# notebook could not be graded: it counts), or failed by grading (the infrastructure's or the
# graders' fault: it does not count against the student's limit).
QUEUED, RUNNING, GRADED, REJECTED, FAILED = "queued", "running", "graded", "rejected", "failed"
COUNTED = (QUEUED, RUNNING, GRADED, REJECTED)
PENDING = (QUEUED, RUNNING)
# What the student reads of a check the service stopped before grading.
INTERRUPTED = (
    "not checked: the course's grading service stopped before it graded this notebook "
    "(not your fault); this check does not count: check again\n"
)

_metadata = sa.MetaData()
checks_table = sa.Table(
    HUB_CHECK.table,
    _metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("student", sa.String(255), nullable=False, index=True),
    sa.Column("assignment", sa.String(255), nullable=False),
    sa.Column("requested", sa.Float, nullable=False),  # epoch seconds (UTC)
    sa.Column("finished", sa.Float),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("late", sa.Boolean, nullable=False, default=False),
    sa.Column("score", sa.Float),
    sa.Column("max_score", sa.Float),
    sa.Column("feedback", sa.Text),  # what the student reads: PASS/FAIL lines and hints
    sa.Column("detail", sa.Text),  # for the instructor: why grading failed, the seed
)


def readable(epoch: float) -> str:
    """A time as people read it: 'Wed 2 Dec 2026, 17:05 UTC'."""
    moment = datetime.fromtimestamp(epoch, UTC)
    return f"{moment:%a} {moment.day} {moment:%b %Y, %H:%M} UTC"


def iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat()


def policy(course_root: Path, **given: Any) -> HubCheck:
    """The checks' settings: the defaults, then course.toml's `[hub_check]` table, then the
    service's options (`given`, None meaning not given). UserError for a value out of range."""
    table = course_schema.table(course_root, "hub_check")  # its keys and types: the schema's
    values = {**table, **{k: v for k, v in given.items() if v is not None}}
    try:
        found = replace(HUB_CHECK, **values)
    except TypeError as exc:
        raise UserError(f"[hub_check]: {exc}") from None
    for name in ("per_day", "workers", "pending_per_student"):
        value = getattr(found, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UserError(f"hub check setting {name} must be a whole number of at least 1")
    for name in ("window", "wait"):
        value = getattr(found, name)
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            raise UserError(f"hub check setting {name} must be a positive number of seconds")
    if found.after_due not in AFTER_DUE:
        raise UserError(f"hub check setting after_due must be one of {', '.join(AFTER_DUE)}")
    return found


@dataclass(frozen=True)
class DueDecision:
    """Whether a check may run now given the assignment's due date, and what to tell."""

    allowed: bool
    late: bool
    message: str  # empty when the check is on time


def due_decision(
    due: float | None, now: float, after_due: str, late_penalty: str = "none"
) -> DueDecision:
    """On time (or no due date): allowed. Past it: refused with after_due "off"; allowed and
    marked late with "late", the course's late policy (nbgrader's penalty method) said."""
    if due is None or now <= due:
        return DueDecision(True, False, "")
    if after_due == "off":
        return DueDecision(
            False, False, f"the due date ({readable(due)}) has passed: checks are closed"
        )
    penalty = {
        "none": "late work keeps its points",
        "zero": "late work gets 0 points",
    }.get(late_penalty, f"the late penalty {late_penalty!r} applies")
    return DueDecision(True, True, f"past the due date ({readable(due)}): {penalty}")


@dataclass(frozen=True)
class Refusal:
    """A check not taken: why, and when the student may ask again (None: not a matter of
    time)."""

    reason: str
    next_allowed: float | None = None

    def text(self) -> str:
        if self.next_allowed is None:
            return self.reason
        return f"{self.reason}; your next check is allowed from {readable(self.next_allowed)}"


@dataclass(frozen=True)
class CheckRecord:
    id: str
    student: str
    assignment: str
    requested: float
    state: str
    late: bool = False
    finished: float | None = None
    score: float | None = None
    max_score: float | None = None
    feedback: str | None = None
    detail: str | None = None

    def answer(self) -> dict[str, Any]:
        """What the student who asked may read of it (no seed, no detail of grading)."""
        return {
            "id": self.id,
            "assignment": self.assignment,
            "state": self.state,
            "late": self.late,
            "requested": iso(self.requested),
            "finished": iso(self.finished),
            "score": self.score,
            "max_score": self.max_score,
            "feedback": self.feedback,
        }

    def for_instructor(self) -> dict[str, Any]:
        return {**self.answer(), "student": self.student, "detail": self.detail}


class CheckRecords:
    """The checks' table in one gradebook database."""

    def __init__(self, db_url: str):
        self.url = gradebook.normalize(db_url)
        self.postgres = gradebook.is_postgres(self.url)
        # autocommit at the driver: each write transaction is begun explicitly (_transaction)
        self.engine = sa.create_engine(self.url, isolation_level="AUTOCOMMIT")
        self._local = threading.Lock()
        _metadata.create_all(self.engine, checkfirst=True)

    @contextlib.contextmanager
    def _transaction(self, student: str) -> Iterator[sa.Connection]:
        """One write transaction, exclusive for `student` across processes and machines."""
        with self._local, self.engine.connect() as conn:
            if self.postgres:
                conn.exec_driver_sql("BEGIN")
                key = gradebook.lock_key("hub-check", student)
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({key:d})")
            else:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.exec_driver_sql("ROLLBACK")
                raise
            conn.exec_driver_sql("COMMIT")

    def reserve(
        self, student: str, assignment: str, settings: HubCheck, now: float, late: bool = False
    ) -> CheckRecord | Refusal:
        """A new queued check for `student`, or a Refusal: a check of theirs still pending
        (settings.pending_per_student), or the limit of the window reached (then the time the
        oldest counted check leaves it)."""
        t = checks_table
        with self._transaction(student) as conn:
            pending = conn.execute(
                sa.select(sa.func.count())
                .select_from(t)
                .where(t.c.student == student, t.c.state.in_(PENDING))
            ).scalar_one()
            if pending >= settings.pending_per_student:
                return Refusal("a check of yours is still waiting or running: wait for its answer")
            used_up = _used_up(conn, student, assignment, settings, now)
            if used_up is not None:
                return used_up
            record = CheckRecord(secrets.token_hex(16), student, assignment, now, QUEUED, late)
            conn.execute(
                t.insert().values(
                    id=record.id,
                    student=student,
                    assignment=assignment,
                    requested=now,
                    state=QUEUED,
                    late=late,
                )
            )
        return record

    def used_up(
        self, student: str, assignment: str, settings: HubCheck, now: float
    ) -> Refusal | None:
        """The Refusal of a check of `assignment` asked now, when the student has none left."""
        with self.engine.connect() as conn:
            return _used_up(conn, student, assignment, settings, now)

    def refused(self, student: str, assignments: list[str], now: float, feedback: str) -> int:
        """Abusive requests of `student`, refused before any grading, recorded as rejected
        checks (one of each of `assignments`), which count against the limit; the number
        recorded."""
        with self._transaction(student) as conn:
            for assignment in assignments:
                conn.execute(
                    checks_table.insert().values(
                        id=secrets.token_hex(16),
                        student=student,
                        assignment=assignment,
                        requested=now,
                        finished=now,
                        state=REJECTED,
                        late=False,
                        feedback=feedback,
                        detail="refused before grading (an abusive request)",
                    )
                )
        return len(assignments)

    def left(self, student: str, assignment: str, settings: HubCheck, now: float) -> int:
        """Checks of `assignment` the student may still ask now."""
        t = checks_table
        with self.engine.connect() as conn:
            used = conn.execute(
                sa.select(sa.func.count())
                .select_from(t)
                .where(
                    t.c.student == student,
                    t.c.assignment == assignment,
                    t.c.state.in_(COUNTED),
                    t.c.requested > now - settings.window,
                )
            ).scalar_one()
        return max(settings.per_day - used, 0)

    def start(self, check_id: str) -> None:
        self._update(check_id, state=RUNNING)

    def finish(
        self,
        check_id: str,
        state: str,
        now: float,
        score: float | None = None,
        max_score: float | None = None,
        feedback: str | None = None,
        detail: str | None = None,
    ) -> None:
        self._update(
            check_id,
            state=state,
            finished=now,
            score=score,
            max_score=max_score,
            feedback=feedback,
            detail=detail,
        )

    def _update(self, check_id: str, **values: Any) -> None:
        with self.engine.connect() as conn:
            conn.execute(checks_table.update().where(checks_table.c.id == check_id).values(values))
            conn.commit()

    def interrupted(self, now: float) -> int:
        """Checks a service that stopped (or was killed) left waiting or running: failed, so
        that they do not count and their students may ask again, and their students are told
        so. The number of them."""
        t = checks_table
        with self.engine.connect() as conn:
            result = conn.execute(
                t.update()
                .where(t.c.state.in_(PENDING))
                .values(
                    state=FAILED,
                    finished=now,
                    feedback=INTERRUPTED,
                    detail="the service stopped before grading it",
                )
            )
            conn.commit()
        return int(result.rowcount)

    def get(self, check_id: str) -> CheckRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(checks_table).where(checks_table.c.id == check_id)
            ).one_or_none()
        return None if row is None else CheckRecord(**row._asdict())

    def list(self, student: str | None = None, assignment: str | None = None) -> list[CheckRecord]:
        """Checks, oldest first: of one student and/or assignment, or all."""
        t = checks_table
        query = sa.select(t).order_by(t.c.requested, t.c.id)
        if student is not None:
            query = query.where(t.c.student == student)
        if assignment is not None:
            query = query.where(t.c.assignment == assignment)
        with self.engine.connect() as conn:
            return [CheckRecord(**row._asdict()) for row in conn.execute(query)]

    def close(self) -> None:
        self.engine.dispose()


def _used_up(
    conn: sa.Connection, student: str, assignment: str, settings: HubCheck, now: float
) -> Refusal | None:
    """The limit of the window reached: a Refusal until the oldest counted check leaves it."""
    t = checks_table
    times = (
        conn.execute(
            sa.select(t.c.requested)
            .where(
                t.c.student == student,
                t.c.assignment == assignment,
                t.c.state.in_(COUNTED),
                t.c.requested > now - settings.window,
            )
            .order_by(t.c.requested)
        )
        .scalars()
        .all()
    )
    if len(times) < settings.per_day:
        return None
    return Refusal(
        f"you have used the {_checks(settings.per_day)} of {assignment} allowed "
        f"in {_window_text(settings.window)}",
        times[len(times) - settings.per_day] + settings.window,
    )


def _checks(n: int) -> str:
    return "1 check" if n == 1 else f"{n} checks"


def _window_text(seconds: float) -> str:
    """'24 hours', '1 hour', '90 seconds'."""
    if seconds % 3600 == 0:
        hours = seconds / 3600
        return "1 hour" if hours == 1 else f"{hours:g} hours"
    return f"{seconds:g} seconds"


@dataclass
class FairQueue:
    """Checks waiting to be graded, taken round-robin across students: each student's own in
    the order asked, one student's at a time, so that many checks of one student never hold
    back another's. Thread-safe."""

    _waiting: collections.OrderedDict[str, collections.deque[str]] = field(
        default_factory=collections.OrderedDict
    )
    _lock: threading.Condition = field(default_factory=threading.Condition)

    def put(self, student: str, check_id: str) -> None:
        with self._lock:
            self._waiting.setdefault(student, collections.deque()).append(check_id)
            self._lock.notify()

    def take(self, timeout: float | None = None) -> tuple[str, str] | None:
        """The next (student, check id): the first of the student whose turn it is (who then
        goes to the back), or None after `timeout` seconds with nothing waiting."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while not self._waiting:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._lock.wait(left)
            student, checks = next(iter(self._waiting.items()))
            check_id = checks.popleft()
            del self._waiting[student]
            if checks:  # the student's other checks wait behind everyone else's
                self._waiting[student] = checks
            return student, check_id

    def __len__(self) -> int:
        with self._lock:
            return sum(len(c) for c in self._waiting.values())
