"""The gradebook's URL: every connection to a PostgreSQL gradebook, nbgrader's included, gives
up on a server that does not answer instead of hanging until a submission's deadline (which
would be recorded as the student's)."""

from __future__ import annotations

import os
import socket
import time

import pytest

from attention_course.classgrade import gradebook
from attention_course.settings import Retries

# What every connection to a PostgreSQL gradebook is given (typed: a server that does not
# answer is said within 10 s; one gone mid-query within a minute or two).
TIMEOUTS = {
    "connect_timeout": "10",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
}


def test_a_postgresql_url_gets_the_timeouts_and_keeps_its_own():
    from urllib.parse import parse_qsl

    plain, query = gradebook.normalize("postgresql://me@127.0.0.1:5432/course").split("?")
    assert plain == "postgresql+psycopg://me@127.0.0.1:5432/course"
    assert dict(parse_qsl(query)) == TIMEOUTS
    url = gradebook.normalize("postgresql://me:secret@127.0.0.1:5432/course?connect_timeout=3")
    assert url.startswith("postgresql+psycopg://me:secret@127.0.0.1:5432/course?")  # its password
    for key, value in TIMEOUTS.items():
        assert f"{key}={'3' if key == 'connect_timeout' else value}" in url
    assert gradebook.normalize(url) == url  # once is enough
    assert (
        gradebook.shown(url)
        == "postgresql+psycopg://me:***@127.0.0.1:5432/course?connect_timeout=3"
    )
    sqlite = gradebook.default_url(gradebook.Path("/srv/course"))
    assert gradebook.normalize(sqlite) == sqlite


def test_nbgraders_own_connection_to_a_silent_server_gives_up(tmp_path):
    """A server that accepts the connection and never says a word (a host gone mid-way
    looks the same): nbgrader's Gradebook, opened on the URL the engine gives it, fails
    within the connect timeout."""
    from nbgrader.api import Gradebook

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        url = gradebook.url(tmp_path, f"postgresql://grader@127.0.0.1:{silent.getsockname()[1]}/db")
        start = time.monotonic()
        with pytest.raises(Exception) as failed:
            Gradebook(url)
        took = time.monotonic() - start
    finally:
        silent.close()
    assert "timeout" in str(failed.value).lower(), failed.value
    assert took < gradebook.CONNECT_SECONDS + 10, took


def test_the_gradebook_url_is_the_environments_then_the_courses_then_the_sqlite_file(
    tmp_path, monkeypatch
):
    monkeypatch.delenv(gradebook.DB_ENV, raising=False)
    assert gradebook.url(tmp_path) == f"sqlite:///{tmp_path}/gradebook.db?timeout=60"
    assert gradebook.url(tmp_path, "sqlite:////srv/other.db") == "sqlite:////srv/other.db"
    monkeypatch.setenv(gradebook.DB_ENV, "postgres://me@db.example:5432/course")
    chosen = gradebook.url(tmp_path, "sqlite:////srv/other.db")
    assert chosen.startswith("postgresql+psycopg://me@db.example:5432/course?")
    assert gradebook.is_postgres(chosen) and not gradebook.is_postgres("sqlite:////srv/a.db")


def test_a_url_is_shown_without_its_password_nor_the_options_the_engine_added():
    url = gradebook.normalize("postgresql://me:secret@h:5432/db?application_name=mine")
    assert gradebook.shown(url) == "postgresql+psycopg://me:***@h:5432/db?application_name=mine"
    # one SQLAlchemy cannot read: left to fail where it is used, shown after the "@"
    bad = gradebook.normalize("postgresql://me:secret@h:port/db")
    assert bad == "postgresql+psycopg://me:secret@h:port/db"
    assert gradebook.shown(bad) == "h:port/db"


def test_a_gradebook_of_neither_kind_is_refused_in_one_line():
    gradebook.check("sqlite:////srv/course/gradebook.db")  # a file named: fine
    with pytest.raises(gradebook.GradebookUnavailable) as refused:
        gradebook.check("mysql://me@h/db")
    words = str(refused.value)
    assert words.startswith("gradebook mysql://me@h/db: not a PostgreSQL") and "\n" not in words


def test_advisory_lock_keys_are_64_bit_and_one_per_name():
    keys = {
        gradebook.lock_key("course", "a", "s1"),
        gradebook.lock_key("course", "a", "s2"),
        gradebook.lock_key("course", "b", "s1"),
        gradebook.lock_key("course", "as", "1"),  # the parts are kept apart
        gradebook.lock_key("other", "a", "s1"),
    }
    assert len(keys) == 5
    assert all(-(2**63) <= k < 2**63 for k in keys)
    many = [gradebook.lock_key(str(i)) for i in range(64)]
    assert any(k < 0 for k in many)  # signed
    assert any(not -(2**55) <= k < 2**55 for k in many)  # all 8 bytes of the digest, not 7
    assert gradebook.lock_key("course", "a", "s1") == gradebook.lock_key("course", "a", "s1")


def test_records_of_a_sqlite_gradebook(tmp_path):
    """What the last grading of each submission gave, kept in the gradebook: nothing until it
    exists (looking makes no file), one row per submission, replaced whole, per assignment."""
    url = gradebook.default_url(tmp_path)
    records = gradebook.Records(url, "course", "a")
    other = gradebook.Records(url, "course", "b")
    try:
        assert records.all() == {} and records.get("s1") == {}
        assert not (tmp_path / gradebook.SQLITE_FILE).exists()
        records.put("s1", "f" * 64, {"status": "graded", "total": 3.0})
        records.put("s2", "e" * 64, {"status": "not graded", "total": None})
        records.put("s1", "d" * 64, {"status": "graded", "total": 4.5})  # graded again
        assert records.all() == {
            "s1": {"status": "graded", "total": 4.5, "fingerprint": "d" * 64},
            "s2": {"status": "not graded", "total": None, "fingerprint": "e" * 64},
        }
        assert list(records.all(["s2"])) == ["s2"]
        assert other.all() == {}
        other.put("s1", "c" * 64, {"status": "graded"})
        assert records.get("s1")["fingerprint"] == "d" * 64
        assert gradebook.Records(url, "another course", "a").all() == {}
        later = gradebook.Records(url, "course", "a")  # another run, on the gradebook as it is
        try:
            assert later.all() == records.all()
        finally:
            later.close()
    finally:
        records.close()
        other.close()


def test_the_records_keys_are_as_long_as_nbgraders_own_and_a_fingerprint(tmp_path):
    """The table as the database holds it: a course, an assignment and a student as long as
    nbgrader's own ids and names may be, a fingerprint as long as a sha256 in hex; a record
    with any of its six fields missing (NULL) is refused by the database itself."""
    import hashlib

    import sqlalchemy as sa
    from nbgrader import api

    url = gradebook.default_url(tmp_path)
    records = gradebook.Records(url, "course", "a")
    try:
        records.put("s1", "f" * 64, {"status": "graded"})
        engine = sa.create_engine(url)
        try:
            found = sa.inspect(engine).get_columns(gradebook.RECORDS_TABLE)
        finally:
            engine.dispose()
    finally:
        records.close()
    lengths = {column["name"]: getattr(column["type"], "length", None) for column in found}
    nbgraders = {
        "course": api.Course.__table__.c.id.type.length,
        "assignment": api.Assignment.__table__.c.name.type.length,
        "student": api.Student.__table__.c.id.type.length,
        "fingerprint": len(hashlib.sha256().hexdigest()),
    }
    assert {name: lengths[name] for name in nbgraders} == nbgraders
    fields = ("course", "assignment", "student", "fingerprint", "outcome", "recorded")
    assert {column["name"]: column["nullable"] for column in found} == dict.fromkeys(fields, False)


def _one_at_a_time(db_url: str, first, second) -> list[str]:
    """Two runs (of course folders `first` and `second`) enter `exclusive` at once: the order
    in which they were in and out."""
    import threading

    order: list[str] = []
    inside = threading.Event()

    def later() -> None:
        inside.wait(10)
        with gradebook.exclusive(db_url, "course", second):
            order.append("second in")

    thread = threading.Thread(target=later)
    thread.start()
    with gradebook.exclusive(db_url, "course", first):
        inside.set()
        time.sleep(0.5)  # the second run waits all this time
        order.append("first out")
    thread.join(10)
    return order


def test_one_run_at_a_time_sets_up_a_sqlite_gradebook(tmp_path):
    url = gradebook.default_url(tmp_path)
    assert _one_at_a_time(url, tmp_path, tmp_path) == ["first out", "second in"]
    assert (tmp_path / ".grading" / "gradebook.lock").exists()


def test_one_run_at_a_time_sets_up_a_postgresql_gradebook_whatever_its_course_folder(
    postgres, tmp_path
):
    """The lock is the database's (an advisory lock of the course), not a file: runs of two
    course folders grading into one gradebook wait for each other."""
    one, other = tmp_path / "one", tmp_path / "other"
    one.mkdir()
    other.mkdir()
    assert _one_at_a_time(postgres.new_database(), one, other) == ["first out", "second in"]
    assert not (one / ".grading").exists() and not (other / ".grading").exists()


def test_a_step_that_met_another_graders_new_row_is_run_again():
    from nbgrader.api import InvalidEntry

    calls: list[int] = []
    times: list[float] = []

    def step(value: int) -> int:
        calls.append(value)
        times.append(time.monotonic())
        if len(calls) < 3:
            raise InvalidEntry("duplicate key value violates unique constraint")
        return value * 2

    assert gradebook.retry_races(step, 21) == 42 and calls == [21, 21, 21]
    waits = [times[1] - times[0], times[2] - times[1]]  # 0.05 s, then 0.1 s: tried again soon
    assert 0.05 <= waits[0] < 0.5 and 0.1 <= waits[1] < 0.5, waits
    calls.clear()

    def always() -> None:
        calls.append(0)
        raise InvalidEntry("duplicate")

    with pytest.raises(InvalidEntry):
        gradebook.retry_races(always, retries=Retries(attempts=3, first=0.01, longest=0.01))
    assert len(calls) == 4  # the first try and 3 more


def test_submission_locks_are_seen_by_every_run_of_the_course(postgres):
    """PostgreSQL advisory locks: a submission one run holds is refused to another, per
    course and assignment, until released or the run's connection ends."""
    url = postgres.new_database()
    first = gradebook.SubmissionLocks(url, "course", "a")
    second = gradebook.SubmissionLocks(url, "course", "a")
    beside = gradebook.SubmissionLocks(url, "course", "b")
    try:
        assert first.acquire("s1") and first.acquire("s2")
        assert not second.acquire("s1") and not second.acquire("s2")
        assert beside.acquire("s1")  # another assignment's submission
        first.release("s1")
        assert second.acquire("s1")
        assert not first.acquire("s1")
        session = first.conn
        first.close()  # its connection ends: every lock it held goes (as its server process
        # ends, a moment after the connection closes)
        assert session is not None and session.closed
        deadline = time.monotonic() + 20
        while not second.acquire("s2"):
            assert time.monotonic() < deadline, "a closed run's lock outlived its connection"
            time.sleep(0.05)
        assert first.held == {}
    finally:
        for locks in (first, second, beside):
            locks.close()


def test_a_run_whose_session_was_lost_lets_go_of_its_submissions_cleanly(postgres):
    """The server ends the run's session (a restart, an administrator): the next lock asked
    for, with no retry left, is GradebookUnavailable; what the run held is let go without
    another error (the server released it with the session), and another run takes it."""
    from attention_course.errors import GradebookUnavailable

    url = postgres.new_database()
    run = gradebook.SubmissionLocks(url, "course", "a", Retries(attempts=0))
    other = gradebook.SubmissionLocks(url, "course", "a")
    admin = gradebook.connect(url)
    try:
        assert run.acquire("s1") and run.conn is not None
        admin.execute("SELECT pg_terminate_backend(%s)", (run.conn.info.backend_pid,))
        with pytest.raises(GradebookUnavailable):
            run.acquire("s2")
        run.release("s1")
        assert run.held == {}
        deadline = time.monotonic() + 20
        while not other.acquire("s1"):
            assert time.monotonic() < deadline, "the lost session's lock outlived it"
            time.sleep(0.05)
    finally:
        for locks in (run, other):
            locks.close()
        admin.close()


def test_a_lost_session_is_made_again_with_the_locks_it_held(postgres):
    """With a retry left (one is enough), the next lock asked for after the session was lost
    is asked on a new session, which takes again what the run held; what another run took
    meanwhile is the run's no more, and said so (`lost`)."""

    url = postgres.new_database()
    run = gradebook.SubmissionLocks(url, "course", "a", Retries(attempts=1, first=0.05))
    other = gradebook.SubmissionLocks(url, "course", "a")
    admin = gradebook.connect(url)

    def end_session() -> None:
        assert run.conn is not None
        lost = run.conn.info.backend_pid
        admin.execute("SELECT pg_terminate_backend(%s)", (lost,))
        deadline = time.monotonic() + 20
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (lost,)).fetchone():
            assert time.monotonic() < deadline, "the session was not ended"
            time.sleep(0.05)

    try:
        assert run.acquire("s1")
        end_session()
        assert run.acquire("s2")
        assert set(run.held) == {"s1", "s2"} and run.lost == set()
        assert not other.acquire("s1") and not other.acquire("s2")
        end_session()
        assert other.acquire("s1")  # taken while the run had no session
        assert run.acquire("s3")
        assert set(run.held) == {"s2", "s3"} and run.lost == {"s1"}
    finally:
        for locks in (run, other):
            locks.close()
        admin.close()


def test_a_database_that_does_not_exist_is_said_with_what_to_do(postgres):
    url = postgres.url("no_such_database")
    with pytest.raises(gradebook.GradebookUnavailable) as refused:
        gradebook.connect(url)
    words = str(refused.value)
    assert "no_such_database" in words and "createdb it first" in words and "\n" not in words


def test_alembic_is_this_environments_whatever_path_the_run_was_given(monkeypatch):
    """nbgrader runs `alembic` from PATH to make a new gradebook's tables: this environment's,
    put first on a PATH that lacks it, once."""
    import shutil
    import sys
    from pathlib import Path

    own = str(Path(sys.executable).parent / "alembic")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    gradebook.find_alembic()
    assert shutil.which("alembic") == own
    path = os.environ["PATH"]
    assert path.endswith(":/usr/bin:/bin")
    gradebook.find_alembic()
    assert os.environ["PATH"] == path


def test_a_new_gradebook_is_stamped_with_alembics_head_read_in_this_process(tmp_path, monkeypatch):
    """The revision a new gradebook is stamped with is the one the `alembic heads` program
    names, read without starting it (2 s each time: nbgrader starts it on every new gradebook)."""
    import subprocess
    import sys
    from pathlib import Path

    import nbgrader.api
    from nbgrader.dbutil import _temp_alembic_ini
    from sqlalchemy import create_engine, text

    alembic = str(Path(sys.executable).parent / "alembic")
    with _temp_alembic_ini(f"sqlite:///{tmp_path / 'unused.db'}") as ini:
        said = subprocess.run([alembic, "-c", ini, "heads"], capture_output=True, text=True)
    head = said.stdout.split()[0]
    assert said.returncode == 0 and len(head) == 12

    gradebook.find_alembic()
    started = []
    monkeypatch.setattr(nbgrader.api.sp, "check_output", lambda *a, **k: started.append(a))
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with nbgrader.api.Gradebook(url, "course"):
        pass
    with create_engine(url).connect() as db:
        stamped = db.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    assert stamped == [head] and started == []


def test_a_state_kept_for_later_lets_go_of_its_claims_and_keeps_its_sessions(postgres, tmp_path):
    """A Dask worker's tasks share its gradebook sessions (State.close(keep=True)): each claim
    is let go (another run takes it) and the lock session and records' pool stay open for the
    next task; a run's own state (close()) ends both."""
    from attention_course.classgrade.jobs import State

    url = postgres.new_database()
    locks = gradebook.SubmissionLocks(url, "course", "a")
    records = gradebook.Records(url, "course", "a")
    other = gradebook.SubmissionLocks(url, "course", "a")
    try:
        records.setup()
        state = State(tmp_path, "a", locks, records)
        assert state.lock("s1")
        state.close(keep=True)
        assert locks.held == {} and other.acquire("s1")  # let go of, taken by another ...
        assert locks.conn is not None and not locks.conn.closed  # ... the session kept
        assert records.engine is not None
        state = State(tmp_path, "a", locks, records)
        assert state.lock("s2")
        state.close()
        assert locks.conn is None and records.engine is None
    finally:
        for held in (locks, other):
            held.close()
        records.close()
