"""What a process of class grading waits on outside itself, and for how long: the gradebook's
database and the disk. Such time is the infrastructure's, never the student's (outcomes.py): it
does not count against a submission's deadline, and a wait that does not end is a stall.

Every wait of a PostgreSQL connection on its server goes through psycopg's `Connection.wait`
(each statement, commit, rollback and ping), and making one through `Connection.connect`:
`watch(postgres=True)` wraps both, so that each is a `Wait` here while it lasts. A thread
blocked on the disk (a local disk or a network file system that does not answer) is seen from
outside: the kernel shows it in state D (uninterruptible sleep), which the watchdog samples for
the one thread it is asked to follow. The watchdog, one thread per process, looks every
PACING.wait_poll: a statement waiting longer than the stall limit is broken (its socket shut
down: it fails at once with psycopg's OperationalError, a transient fault the caller tries
again) and kept in `stalls`, in words; a connection being made is bounded by its own
connect_timeout; a wait on the disk cannot be broken: the run that started the process stops
it instead. A wait that has lasted `told_after` is told to `listener`, and so is its end (under
the guard: in the order they happen).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from attention_course.settings import PACING

GRADEBOOK, DISK = "the gradebook's database", "the disk"


@dataclass
class Wait:
    what: str  # GRADEBOOK or DISK
    since: float  # time.monotonic() when it began
    brake: Callable[[], None] | None = None  # ends it at once (None: it cannot be)
    told: bool = False
    broken: bool = False


class Waits:
    """The waits of this process going on, and those of the work since `reset` (a submission):
    how long they took in all, and the stalls broken."""

    def __init__(self) -> None:
        self._forget()
        os.register_at_fork(after_in_child=self._forget)  # a forked job starts its own

    def _forget(self) -> None:
        self.guard = threading.Lock()
        self.open: dict[int, Wait] = {}
        self.finished = 0.0  # seconds of the waits that ended since `reset`
        self.stalls: list[str] = []  # the waits broken since `reset`, in words
        self.stall = PACING.stall
        self.told_after = PACING.wait_told
        self.listener: Callable[[Wait | None, float], None] | None = None
        self.followed: int | None = None  # a thread's native id, sampled for the disk
        self.disk: int | None = None  # the open wait of the followed thread on the disk
        self.tokens = itertools.count()
        self.watchdog: threading.Thread | None = None

    def begin(self, what: str, brake: Callable[[], None] | None, since: float | None = None) -> int:
        with self.guard:
            token = next(self.tokens)
            self.open[token] = Wait(what, time.monotonic() if since is None else since, brake)
        return token

    def end(self, token: int) -> None:
        with self.guard:  # (told under the guard: a wait's end is never told before it)
            wait = self.open.pop(token, None)
            if wait is None:
                return
            self.finished += time.monotonic() - wait.since
            if wait.told and self.listener is not None:
                self.listener(self._oldest_told(), self.finished)

    def _oldest_told(self) -> Wait | None:
        told = [wait for wait in self.open.values() if wait.told]
        return min(told, key=lambda wait: wait.since) if told else None

    def reset(self, listener: Callable[[Wait | None, float], None] | None = None) -> None:
        """Start counting anew (a submission's grading begins), told to `listener`."""
        with self.guard:
            self.finished = 0.0
            self.stalls = []
            self.listener = listener

    def waited(self) -> float:
        """Seconds waited since `reset`: the waits that ended and those going on."""
        now = time.monotonic()
        with self.guard:
            return self.finished + sum(now - wait.since for wait in self.open.values())

    def look(self) -> None:
        """One look of the watchdog: the followed thread's state, stalls broken, long waits
        told."""
        now = time.monotonic()
        blocked = self.followed is not None and thread_state(self.followed) == "D"
        if blocked and self.disk is None:
            self.disk = self.begin(DISK, None, since=now)
        elif not blocked and self.disk is not None:
            self.end(self.disk)
            self.disk = None
        with self.guard:
            for wait in list(self.open.values()):
                if wait.brake is not None and not wait.broken and now - wait.since > self.stall:
                    wait.broken = True
                    self.stalls.append(f"{wait.what} did not answer for {now - wait.since:.0f} s")
                    with contextlib.suppress(Exception):  # (a connection closed meanwhile)
                        wait.brake()
                if not wait.told and now - wait.since >= self.told_after:
                    wait.told = True
                    if self.listener is not None:
                        self.listener(wait, self.finished)

    def _watch(self) -> None:
        while True:
            time.sleep(PACING.wait_poll)
            self.look()

    def start(self) -> None:
        """The watchdog of this process, started once."""
        if self.watchdog is None:
            self.watchdog = threading.Thread(
                target=self._watch, name="attention-course-waits", daemon=True
            )
            self.watchdog.start()


WAITS = Waits()


def thread_state(native_id: int) -> str:
    """A thread of this process's state, as the kernel says it (R, S, D, ...; "" if gone)."""
    try:
        with open(f"/proc/self/task/{native_id}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return ""


def watch(
    stall: float = PACING.stall,
    postgres: bool = False,
    follow: int | None = None,
    told_after: float = PACING.wait_told,
) -> Waits:
    """This process's waits, watched: a wait on the gradebook past `stall` seconds broken
    (`postgres`: psycopg's connections wrapped first), the thread whose native id is `follow`
    sampled for waits on the disk, a wait of `told_after` told to the listener."""
    if postgres:
        _wrap_psycopg()
    WAITS.stall, WAITS.told_after = stall, told_after
    if follow is not None:
        WAITS.followed = follow
    WAITS.start()
    return WAITS


def _shut(conn) -> None:
    """End a connection's wait at once: its socket shut down (the server sees it closed)."""
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        sock.shutdown(socket.SHUT_RDWR)


def _wrap_psycopg() -> None:
    """Every wait of a psycopg connection on its server is a Wait (once per process): each
    statement, commit and ping (`Connection.wait`, broken past the stall limit), and making a
    connection (`connect`, which its connect_timeout bounds: gradebook.POSTGRES_OPTIONS)."""
    import psycopg

    wait = psycopg.Connection.wait
    if getattr(wait, "watched", False):
        return
    connect = psycopg.Connection.connect.__func__  # type: ignore[attr-defined]

    @functools.wraps(wait)
    def watched(self, *args, **kwargs):
        token = WAITS.begin(GRADEBOOK, functools.partial(_shut, self))
        try:
            return wait(self, *args, **kwargs)
        finally:
            WAITS.end(token)

    @functools.wraps(connect)
    def connecting(cls, *args, **kwargs):
        token = WAITS.begin(GRADEBOOK, None)
        try:
            return connect(cls, *args, **kwargs)
        finally:
            WAITS.end(token)

    watched.watched = True  # type: ignore[attr-defined]
    psycopg.Connection.wait = watched  # type: ignore[method-assign]
    psycopg.Connection.connect = classmethod(connecting)  # type: ignore[method-assign,assignment]
    psycopg.connect = psycopg.Connection.connect  # (the module's name for it, as SQLAlchemy calls)


def stalled(text: str) -> str:
    """`text` (a transient fault's reason) as the stall it was, if one was broken since the
    last reset."""
    if not WAITS.stalls:
        return text
    return f"{WAITS.stalls[-1]} (a stall; its connection was broken, to try again)"
