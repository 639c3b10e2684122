"""What a process of class grading waits on outside itself (classgrade/waits.py), and how a run
decides whose a submission's time is (jobs.GradingJob.over): a wait of a real PostgreSQL
connection on a server stopped with SIGSTOP is broken at the stall limit and said as a stall;
waits are told in the order they happen; a submission's time counts its work, not its waits."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from attention_course.classgrade import outcomes, waits
from attention_course.classgrade.gradebook import normalize
from attention_course.classgrade.jobs import GradingJob
from attention_course.settings import PACING
from tests.pgserver import PostgresServer


@pytest.fixture(scope="module")
def server():
    """A PostgreSQL server of this module's own (its test stops it)."""
    pg = PostgresServer().start()
    yield pg
    pg.stop()


def test_a_statement_on_a_stopped_server_is_broken_at_the_stall_limit_and_said(server):
    """Every process of the server stopped (SIGSTOP): a statement on an open connection would
    wait for ever (the kernel still acknowledges what it is sent); watched, it fails with
    psycopg's OperationalError (a transient fault) once the stall limit has passed, and the
    stall is kept in words. A statement shorter than the limit is left alone. A connection made
    to the stopped server is a wait too, told, which its connect_timeout ends."""
    conninfo = normalize(server.new_database()).replace("postgresql+psycopg://", "postgresql://")
    conn = psycopg.connect(conninfo, autocommit=True)
    watched = waits.watch(stall=1.5, postgres=True)
    watched.reset()
    stopped: list[int] = []
    try:
        assert conn.execute("SELECT pg_sleep(0.6)").fetchone() is not None  # shorter: left
        assert watched.stalls == [] and watched.waited() >= 0.6
        stopped = server.freeze()
        began = time.monotonic()
        with pytest.raises(psycopg.OperationalError) as raised:
            conn.execute("SELECT 1")
        took = time.monotonic() - began
        assert 1.5 <= took < 1.5 + 2 * PACING.wait_poll + 1.0, took
        assert outcomes.of_exception(raised.value) == outcomes.TRANSIENT
        assert watched.stalls == ["the gradebook's database did not answer for 2 s"]
        assert waits.stalled("the gradebook's database failed: gone").startswith(
            "the gradebook's database did not answer for 2 s (a stall"
        )
        told: list[str | None] = []  # a connection made meanwhile: a wait, bounded by its timeout
        watched.reset(lambda wait, waited: told.append(wait and wait.what))
        began = time.monotonic()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(conninfo, connect_timeout=2)
        assert time.monotonic() - began >= 2 and watched.waited() >= 2
        assert told == [waits.GRADEBOOK, None]  # told as it lasted, then its end
    finally:
        server.thaw(stopped)
        watched.reset()
        watched.stall = PACING.stall
        conn.close()


def test_a_wait_and_its_end_are_told_in_the_order_they_happen():
    """A wait is told once it has lasted `told_after`, its end after it (never the other way
    round, whichever thread looks), with the seconds waited so far; a short wait is never
    told, but counted."""
    watched = waits.Waits()
    told: list[tuple[str | None, float]] = []
    watched.told_after = 0.2
    watched.reset(lambda wait, waited: told.append((wait and wait.what, waited)))
    short = watched.begin(waits.GRADEBOOK, None)
    watched.end(short)
    assert told == []
    token = watched.begin(waits.DISK, None)
    watched.look()
    assert told == []  # not yet long enough
    time.sleep(0.25)
    watched.look()
    watched.look()  # told once
    assert told == [(waits.DISK, pytest.approx(0.0, abs=0.05))]
    watched.end(token)
    assert told[1][0] is None and told[1][1] >= 0.25
    assert watched.waited() == pytest.approx(told[1][1])


def test_the_followed_threads_state_is_read_from_the_kernel():
    """A thread that sleeps is in state S, one that runs R; no thread, no state."""
    sleeping = threading.Event()
    ids: list[int] = []

    def sleeper() -> None:
        ids.append(threading.get_native_id())
        sleeping.wait(5)

    thread = threading.Thread(target=sleeper)
    thread.start()
    try:
        while not ids:
            time.sleep(0.01)
        time.sleep(0.05)
        assert waits.thread_state(ids[0]) == "S"
        assert waits.thread_state(threading.get_native_id()) == "R"  # this one, reading
    finally:
        sleeping.set()
        thread.join()
    assert waits.thread_state(0) == ""  # (a thread's id is never 0; one gone may be reused)


class _Nothing:
    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


def _job_sent(seconds: float, stall: float = 10.0) -> GradingJob:
    job = GradingJob(None, _Nothing(), _Nothing())  # type: ignore[arg-type]
    job.send("a1", "ada", False, seconds, stall)
    return job


def test_a_submissions_time_counts_its_work_not_its_waits():
    """Sent with 10 s: past 10 s of work (and the time a wait may go untold) it is the
    student's; a wait the job told of, going on or ended, is not counted; a wait past the stall
    limit (and the time the job has to break it itself) is the infrastructure's, said as a
    stall, and said in the progress once it has lasted PACING.wait_noted; another submission's
    lines change nothing."""
    job = _job_sent(10.0, stall=30.0)
    start, untold, grace = job.sent, PACING.wait_untold, PACING.stall_grace
    assert job.over(start + 10 + untold - 0.01) is None
    assert job.over(start + 10 + untold + 0.01) == (
        outcomes.STUDENT,
        "grading took longer than 10 s",
    )
    assert job.heard(
        {"student": "ada", "waiting": waits.GRADEBOOK, "since": start + 4, "waited": 0}
    )
    assert job.over(start + 4 + 30 + grace - 0.01) is None  # 4 s of work, then waiting
    side, reason = job.over(start + 4 + 30 + grace + 0.01) or ("", "")
    assert side == outcomes.TRANSIENT
    lasted = 30 + grace
    assert reason == f"the gradebook's database did not answer for {lasted:.0f} s (a stall)"
    job.waiting = (waits.GRADEBOOK, time.monotonic() - PACING.wait_noted + 0.5)
    assert job.wait_to_note() is None  # not long enough yet
    job.waiting = (waits.GRADEBOOK, time.monotonic() - PACING.wait_noted)
    said = job.wait_to_note() or ""
    assert (
        said.startswith("waiting on the gradebook's database for ") and "stall after 30 s" in said
    )
    assert job.wait_to_note() is None  # once per wait
    assert job.heard({"student": "ada", "waiting": None, "waited": 25.0})
    assert job.over(start + 25 + 10 + untold - 0.01) is None  # 10 s of work
    assert job.over(start + 25 + 10 + untold + 0.01) is not None
    assert job.heard({"student": "bob", "waiting": None, "waited": 99.0})  # an earlier task's
    assert job.waited == 25.0
    assert not job.heard({"student": "ada", "graded": True})  # a reply, not a wait
    job.task = None
    assert job.over(start + 1000) is None  # nothing sent
