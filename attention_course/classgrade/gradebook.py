"""Where a course's gradebook is (a SQLite file or a PostgreSQL database), and writing to it
from several graders at once.

The URL is chosen in one place, `url`: the environment variable ATTENTION_COURSE_DB (which
`--db URL` sets for a command and everything it starts) wins over the course's
nbgrader_config.py, whose own default is the SQLite file `gradebook.db` of the course folder.
With PostgreSQL, runs on several machines grade one course side by side: a submission is
claimed with a PostgreSQL advisory lock (a file lock in the course folder cannot be seen from
another machine), the gradebook's tables and the assignment are set up by one run at a time,
and a student or submission created by two runs at once is looked up again, not duplicated.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from attention_course.errors import GradebookUnavailable
from attention_course.settings import DB_ENV, PACING, RETRIES, Retries

if TYPE_CHECKING:
    import psycopg

SQLITE_FILE = "gradebook.db"
# timeout: parallel grading processes wait for each other's writes instead of failing.
SQLITE_OPTIONS = "?timeout=60"
DRIVER = "postgresql+psycopg"  # psycopg 3 through SQLAlchemy
CONNECT_SECONDS = 10
# Every connection to a PostgreSQL gradebook, ours and nbgrader's (they are in the URL): a
# server that cannot be reached is said within CONNECT_SECONDS, and one that vanishes mid-query
# (its host gone, not restarted) within a minute or two, never a hang until the submission's
# deadline (which would be recorded as the student's). A value the URL gives itself wins.
POSTGRES_OPTIONS = {
    "connect_timeout": str(CONNECT_SECONDS),
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",  # ms: data sent and never acknowledged
}

T = TypeVar("T")


def default_url(root: Path) -> str:
    """The course's own SQLite gradebook."""
    return f"sqlite:///{Path(root) / SQLITE_FILE}{SQLITE_OPTIONS}"


def normalize(db_url: str) -> str:
    """A PostgreSQL URL with psycopg 3 as its driver (`postgresql://` alone would make
    SQLAlchemy look for psycopg2) and POSTGRES_OPTIONS where it does not set them."""
    for prefix in ("postgresql://", "postgres://"):
        if db_url.startswith(prefix):
            db_url = DRIVER + "://" + db_url.removeprefix(prefix)
    if not db_url.startswith(DRIVER + "://"):
        return db_url
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(db_url)
    except Exception:  # noqa: BLE001 (a URL SQLAlchemy cannot read is refused where it is used)
        return db_url
    missing = {k: v for k, v in POSTGRES_OPTIONS.items() if k not in parsed.query}
    if not missing:
        return db_url
    return parsed.update_query_dict(missing).render_as_string(hide_password=False)


def url(root: Path, configured: str | None = None) -> str:
    """The gradebook of the course at `root`: ATTENTION_COURSE_DB if set, else `configured`
    (nbgrader_config.py's `c.CourseDirectory.db_url`), else the course's SQLite file."""
    return normalize(os.environ.get(DB_ENV) or configured or default_url(root))


def find_alembic() -> None:
    """nbgrader stamps a new gradebook (a PostgreSQL database is empty until its first open)
    with the head of its migrations, which it asks of an `alembic` program on PATH: a new
    Python process that takes 2 s to say one word. It is read here instead, in this process,
    from nbgrader's own migrations (`alembic_head`); and this environment's `alembic` is put
    first on PATH for what else nbgrader runs it for (the upgrade of an older gradebook)."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = alembic_head
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


@functools.cache
def alembic_head() -> str:
    """The newest revision of nbgrader's gradebook migrations, as `alembic heads` says it."""
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    head = ScriptDirectory(ALEMBIC_DIR).get_current_head()
    if head is None:
        raise RuntimeError(f"nbgrader's migrations in {ALEMBIC_DIR} have no head")
    return head


def is_postgres(db_url: str) -> bool:
    return db_url.startswith("postgresql")


def shown(db_url: str) -> str:
    """The URL as it may be printed: no password."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(db_url)
        ours = [k for k, v in POSTGRES_OPTIONS.items() if parsed.query.get(k) == v]
        return parsed.difference_update_query(ours).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 (a URL SQLAlchemy cannot read is shown as it is)
        return db_url.split("@")[-1]


def _conninfo(db_url: str) -> str:
    """The URL in the form libpq reads (no SQLAlchemy driver name)."""
    from sqlalchemy.engine import make_url

    return make_url(db_url).set(drivername="postgresql").render_as_string(hide_password=False)


def connect(db_url: str) -> psycopg.Connection[tuple[Any, ...]]:
    """A psycopg connection to a PostgreSQL gradebook (autocommit), or GradebookUnavailable
    saying why in one line. Keepalives let the server notice a grader that vanished, so its
    locks do not outlive it by more than a minute or two."""
    import psycopg

    try:
        return psycopg.connect(
            _conninfo(normalize(db_url)),  # with POSTGRES_OPTIONS
            autocommit=True,
            application_name="attention-course",
        )
    except (psycopg.Error, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        if "database" in reason and "does not exist" in reason:
            reason += " (nbgrader makes the tables, not the database: createdb it first)"
        raise GradebookUnavailable(f"gradebook {shown(db_url)}: {reason}") from None


def check(db_url: str) -> None:
    """GradebookUnavailable (one line) unless the gradebook can be reached: a PostgreSQL
    server that answers and a database that exists (nbgrader makes the tables, not the
    database); for SQLite, a URL naming a file."""
    if is_postgres(db_url):
        connect(db_url).close()
    elif not db_url.startswith("sqlite:///"):
        raise GradebookUnavailable(
            f"gradebook {shown(db_url)}: not a PostgreSQL (postgresql://USER@HOST:PORT/DB) "
            "or SQLite (sqlite:////PATH/gradebook.db) URL"
        )


def lock_key(*parts: str) -> int:
    """A signed 64-bit advisory lock key for a name (course, assignment, student...)."""
    digest = hashlib.sha256("\0".join(("attention-course", *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _try_lock(conn: psycopg.Connection[tuple[Any, ...]], key: int) -> bool:
    """Take advisory lock `key` for the connection's session if it is free (whether it was)."""
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
    assert row is not None  # a SELECT of one function: one row
    (free,) = row
    return bool(free)


class SubmissionLocks:
    """Per-submission locks every grader of the course sees, wherever it runs: PostgreSQL
    session advisory locks, held on one connection of this run; they go when it ends, however
    it ends. A connection lost (the server restarted) is made again, with backoff
    (settings.RETRIES), and the locks it held are taken again; one another run took meanwhile
    is in `lost`. GradebookUnavailable when the server does not come back."""

    def __init__(self, db_url: str, course_id: str, assignment: str, retries: Retries = RETRIES):
        self.db_url = db_url
        self.names = (course_id, assignment)
        self.held: dict[str, int] = {}
        self.lost: set[str] = set()
        self.retries = retries
        self.conn: psycopg.Connection[tuple[Any, ...]] | None = None

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        conn = connect(self.db_url)
        for student, key in list(self.held.items()):  # a new session holds nothing yet
            if not _try_lock(conn, key):
                del self.held[student]
                self.lost.add(student)
        return conn

    def _lock(self, key: int) -> bool:
        import psycopg

        attempt = 0
        while True:
            try:
                if self.conn is None or self.conn.closed or self.conn.broken:
                    self.conn = None
                    self.conn = self._connect()
                return _try_lock(self.conn, key)
            except (psycopg.Error, GradebookUnavailable) as exc:  # the server went away
                self._drop()
                attempt += 1
                if attempt > self.retries.attempts:
                    if isinstance(exc, GradebookUnavailable):
                        raise
                    reason = " ".join(str(exc).split()) or type(exc).__name__
                    where = shown(self.db_url)
                    raise GradebookUnavailable(f"gradebook {where}: {reason}") from None
                time.sleep(self.retries.delay(attempt))

    def _drop(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.close()
        self.conn = None

    def acquire(self, student: str) -> bool:
        key = lock_key(*self.names, student)
        got = self._lock(key)
        if got:
            self.held[student] = key
            self.lost.discard(student)
        return got

    def release(self, student: str) -> None:
        import psycopg

        key = self.held.pop(student, None)
        if key is not None and self.conn is not None and not self.conn.closed:
            try:
                self.conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except psycopg.Error:
                self._drop()  # a lost connection has released every lock it held

    def close(self) -> None:
        self._drop()  # releases every lock still held
        self.held.clear()


RECORDS_TABLE = "attention_course_grading"


class Records:
    """What the last grading of each submission gave (its fingerprint, outcome and total),
    kept in the gradebook itself, in a table of ours beside nbgrader's: every course folder
    grading into one gradebook sees what the others graded. The table is made by `setup`,
    once nbgrader's tables are there (a database nbgrader finds not empty is not set up by
    it). Errors are SQLAlchemy's (outcomes.of_exception tells a transient one)."""

    def __init__(self, db_url: str, course_id: str, assignment: str):
        import sqlalchemy as sa

        self.db_url = db_url
        self.names = (course_id, assignment)
        self.engine: Any = None
        self.ready = False
        self.nbgrader = False  # nbgrader's tables are there
        self.table = sa.Table(
            RECORDS_TABLE,
            sa.MetaData(),
            sa.Column("course", sa.String(128), primary_key=True),
            sa.Column("assignment", sa.String(128), primary_key=True),
            sa.Column("student", sa.String(128), primary_key=True),
            sa.Column("fingerprint", sa.String(64), nullable=False),
            sa.Column("outcome", sa.Text, nullable=False),
            sa.Column("recorded", sa.Float, nullable=False),
        )

    def _engine(self) -> Any:
        import sqlalchemy as sa

        if self.engine is None:
            self.engine = sa.create_engine(self.db_url, pool_pre_ping=True)
        return self.engine

    def _exists(self) -> bool:
        """Whether the gradebook and this table are there (looking makes neither)."""
        import sqlalchemy as sa

        if not self.ready:
            if self.db_url.startswith("sqlite:///"):
                path = Path(self.db_url.removeprefix("sqlite:///").split("?")[0])
                if not path.exists():
                    return False
            self.ready = sa.inspect(self._engine()).has_table(RECORDS_TABLE)
        return self.ready

    def setup(self) -> None:
        self.table.metadata.create_all(self._engine(), checkfirst=True)
        self.ready = True

    def _where(self, student: str | None = None) -> Any:
        import sqlalchemy as sa

        course, assignment = self.names
        found = sa.and_(self.table.c.course == course, self.table.c.assignment == assignment)
        return found if student is None else sa.and_(found, self.table.c.student == student)

    def get(self, student: str) -> dict:
        """The last record of a submission ({} if none)."""
        return self.all([student]).get(student, {})

    def all(self, students: list[str] | None = None, held: bool = False) -> dict[str, dict]:
        """student -> its last record (of `students`, or every one); `held`: each with
        "held", whether nbgrader's tables hold the student's submission of the assignment
        (the grade or "no score" the record speaks of: a gradebook restored from a backup
        holds a record only with its submission, as both are written in that order)."""
        import json

        import sqlalchemy as sa

        if not self._exists():
            return {}
        t = self.table
        columns = [t.c.student, t.c.fingerprint, t.c.outcome]
        source: Any = t
        joined = held and self._nbgraders()  # (none held in a gradebook without nbgrader's)
        if joined:
            from nbgrader.api import Assignment, SubmittedAssignment

            a, sub = Assignment.__table__, SubmittedAssignment.__table__
            columns.append(sub.c.id)
            source = t.outerjoin(a, a.c.name == t.c.assignment).outerjoin(
                sub, sa.and_(sub.c.assignment_id == a.c.id, sub.c.student_id == t.c.student)
            )
        query = sa.select(*columns).select_from(source).where(self._where())
        if students is not None:
            query = query.where(t.c.student.in_(students))
        with self._engine().connect() as conn:
            rows = conn.execute(query).fetchall()
        found = {row[0]: {**json.loads(row[2]), "fingerprint": row[1]} for row in rows}
        if held:
            for row in rows:
                found[row[0]]["held"] = joined and row[3] is not None
        return found

    def _nbgraders(self) -> bool:
        """Whether nbgrader's tables are there beside this one (a gradebook nbgrader made)."""
        import sqlalchemy as sa

        if not self.nbgrader:
            self.nbgrader = sa.inspect(self._engine()).has_table("submitted_assignment")
        return self.nbgrader

    def put(self, student: str, fingerprint: str, outcome: dict) -> None:
        import json

        if not self._exists():
            self.setup()
        row = {
            "course": self.names[0],
            "assignment": self.names[1],
            "student": student,
            "fingerprint": fingerprint,
            "outcome": json.dumps(outcome),
            "recorded": time.time(),
        }
        with self._engine().begin() as conn:  # one transaction: the old row or the new one
            conn.execute(self.table.delete().where(self._where(student)))
            conn.execute(self.table.insert().values(**row))

    def close(self) -> None:
        if self.engine is not None:
            self.engine.dispose()
        self.engine = None


@contextlib.contextmanager
def exclusive(db_url: str, course_id: str, root: Path) -> Iterator[None]:
    """One run at a time in the block (setting up the gradebook's tables and recording the
    assignment): a PostgreSQL advisory lock, or a file lock beside a SQLite gradebook's
    course."""
    if is_postgres(db_url):
        conn = connect(db_url)
        try:
            # asked again and again, not waited for in one statement: a statement that waits
            # longer than the stall limit is broken as a stall (waits.py)
            for wait in PACING.claim_waits.waits():
                if _try_lock(conn, lock_key(course_id, "gradebook")):
                    break
                time.sleep(wait)
            yield
        finally:
            conn.close()
        return
    folder = Path(root) / ".grading"  # classgrade.STATE_DIR (this module sits below it)
    folder.mkdir(exist_ok=True)  # in the course folder, which is there
    with open(folder / "gradebook.lock", "ab") as held:  # made if missing, never written
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def retry_races(
    step: Callable[..., T], *args, retries: Retries = PACING.gradebook_races, **kwargs
) -> T:
    """Run a gradebook step that finds or creates rows (students, submissions) again when
    another grader created the same row at the same moment: nbgrader then reports the unique
    key violation as InvalidEntry; the next try finds the row (`retries.attempts` times)."""
    from nbgrader.api import InvalidEntry
    from sqlalchemy.exc import IntegrityError

    for wait in (*retries.tries(), None):
        try:
            return step(*args, **kwargs)
        except (InvalidEntry, IntegrityError):
            if wait is None:  # the last try
                raise
            time.sleep(wait)
    raise AssertionError("unreachable")
