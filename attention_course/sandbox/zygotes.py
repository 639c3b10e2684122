"""The zygotes of this grading process: one pre-imported Python per kind, forked into each sandbox.

A sandboxed program (the grading worker, the notebook run, doctor's probe) no longer starts
Python and its imports in every sandbox. `Zygote(kind)` starts, once per grading process and
kind, a fresh interpreter (`inside/zygote.py`: exec'ed with `-I` and the sandbox's clean
environment, never forked from this process, which holds the grading key, the graders and other
students' data) that imports what that kind's programs import and then forks on request. Each
sandbox is still made by bubblewrap exactly as `jail.command` makes it, around a placeholder
(`PLACEHOLDER`); the zygote's child joins that sandbox's namespaces, cgroup and user, drops every
capability, loads the system call filter and runs the program (`inside/zygote.py` says how).

The zygote is trusted, the program it forks is not: the exit status of the program comes from
the zygote (which reaps it), never from the program. A zygote that ends, hangs or cannot start is
a fault of grading (`ZygoteLost`), never a student's; the next sandbox starts a fresh one.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from attention_course.sandbox import jail, syscall_filter
from attention_course.settings import PACING

PLACEHOLDER = ["/bin/sh", "-c", "echo ready; exec cat"]  # a sandbox's first program: it waits
KINDS = {"cells.py": "cells"}  # the programs not forked from the "worker" zygote


# The zygote's whole command line (its children show it in /proc/self/cmdline): it reads where
# its script is from its socket (its stdin), and runs it as the file it is inside the sandbox.
_BOOT = (
    "import json, socket; s = socket.socket(fileno=0); c = json.loads(s.recv(1 << 16, "
    "socket.MSG_PEEK)); exec(compile(open(c['script']).read(), '{inside}/zygote.py', 'exec'))"
)


def kind_of(script: str) -> str:
    """The zygote a program is forked from: the notebook run's imports IPython and matplotlib."""
    return KINDS.get(script, "worker")


class ZygoteLost(RuntimeError):
    """The zygote ended, hung or did not start: a fault of grading, never a student's."""


class ForkLate(ZygoteLost):
    """The zygote took the request but had not forked by the time given (it was killed): a
    fault of grading, unless that time was what the submission had left (confined.py)."""


class Child:
    """One program the zygote forked: its host pid (the first child, outside the sandbox's pid
    namespace: the program is its child) and, once it has ended, its exit status."""

    def __init__(self, zygote: Zygote, ident: int) -> None:
        self.zygote = zygote
        self.id = ident
        self.pid: int | None = None
        self.returncode: int | None = None  # as subprocess's: -N for a signal N

    def wait(self, timeout: float | None = None) -> int:
        """The program's exit status; TimeoutError if it has not ended within `timeout`,
        ZygoteLost if the zygote ended before it could say."""
        until = None if timeout is None else time.monotonic() + timeout
        with self.zygote.changed:
            while self.returncode is None:
                if self.zygote.lost is not None:
                    raise ZygoteLost(self.zygote.lost)
                left = None if until is None else until - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError("the program has not ended")
                self.zygote.changed.wait(left)
            return self.returncode


class Zygote:
    def __init__(self, kind: str) -> None:
        """Start the zygote (it imports in the background: `fork` waits for it)."""
        self.kind = kind
        self.changed = threading.Condition()
        self.lost: str | None = None  # why it is gone
        self.pid: int | None = None  # the zygote's own, once it said it is ready
        self._children: dict[int, Child] = {}
        self._ids = itertools.count()  # each child's, as the zygote reports on it
        self._send_lock = threading.Lock()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._errors: IO[bytes] = tempfile.TemporaryFile()
        self._last_words: str | None = None  # its stderr's last line, kept as it is killed
        cache = jail.mpl_cache()
        script = jail.INSIDE_DIR / "zygote.py"
        config = {"kind": kind, "host": str(jail.INSIDE_DIR), "inside": jail.INSIDE}
        config["mpl"] = str(cache or "")
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT.format(inside=jail.INSIDE)],
                env=jail.environment(),
                cwd="/",
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=self._errors,
                start_new_session=True,
            )
            config["script"] = str(script)
            with syscall_filter.descriptor() as program:
                socket.send_fds(ours, [json.dumps(config).encode()], [program])
        finally:
            theirs.close()
        self._sock = ours
        threading.Thread(target=self._listen, name=f"zygote-{kind}", daemon=True).start()

    def _listen(self) -> None:
        """Every message of the zygote: ready, forked, exit; its end (or a forged message:
        it is trusted, so that is an end too)."""
        while True:
            try:
                data = self._sock.recv(PACING.read_bytes)
                message = json.loads(data) if data else None
            except (OSError, ValueError):
                message = None
            with self.changed:
                if not isinstance(message, dict) or message.get("op") == "failed":
                    why = "it ended" if message is None else f"it refused a request ({message})"
                    self.lost = self.lost or f"the sandbox's zygote ({self.kind}): {why}"
                    self.changed.notify_all()
                    return
                match message.get("op"):
                    case "ready":
                        self.pid = int(message["pid"])
                    case "forked":
                        self._children[int(message["id"])].pid = int(message["pid"])
                    case "exit":
                        child = self._children.pop(int(message["id"]))
                        child.returncode = os.waitstatus_to_exitcode(int(message["status"]))
                self.changed.notify_all()

    def errors(self) -> str:
        """The last line the zygote wrote to its stderr (why it ended, where it says)."""
        if self._last_words is not None:  # (it was killed: its stderr's file is closed)
            return self._last_words
        try:
            self._errors.seek(0)
            text = self._errors.read()[-PACING.read_bytes :].decode(errors="replace").strip()
        except (OSError, ValueError):  # (ValueError: closed by a kill just now)
            return ""
        return text.splitlines()[-1] if text else ""

    def _wait_for(self, done: Callable[[], bool], until: float, late: str) -> bool:
        """Wait (holding `changed`) until `done()` or the zygote is lost; at `until`, kill the
        zygote, saying it was `late`. Whether `until` came first (not a loss of other cause)."""
        while not done() and self.lost is None:
            left = until - time.monotonic()
            if left <= 0:
                self.kill(f"the sandbox's zygote ({self.kind}) {late}")
                return True
            self.changed.wait(left)
        return False

    def wait_ready(self, until: float) -> None:
        """Wait for the zygote's imports, never past `until` (time.monotonic())."""
        with self.changed:
            self._wait_for(lambda: self.pid is not None, until, "did not start in time")
        if self.lost is not None:
            raise ZygoteLost(f"{self.lost} {self.errors()}".strip())

    def fork(self, request: dict[str, Any], fds: list[int], until: float) -> Child:
        """Fork a program into a sandbox (the request says which; `fds`: its stdin, stdout,
        stderr and sealed inputs), never waiting past `until`."""
        self.wait_ready(until)
        with self.changed:
            child = Child(self, next(self._ids))
            self._children[child.id] = child
        data = json.dumps(dict(request, id=child.id)).encode()
        try:
            with self._send_lock:
                ready = select.select([], [self._sock], [], max(until - time.monotonic(), 0))[1]
                if not ready:
                    raise TimeoutError
                socket.send_fds(self._sock, [data], fds)
        except (OSError, ValueError) as exc:  # a TimeoutError (no room in time), a closed socket
            self.kill(f"the sandbox's zygote ({self.kind}) took no request ({exc!r})")
            raise ZygoteLost(self.lost) from None
        with self.changed:
            late = self._wait_for(  # (its end is said after it: never before it is forked)
                lambda: child.pid is not None,
                until,
                "did not fork in time",
            )
            if self.lost is not None:  # ForkLate only for our own kill at `until`
                raise (ForkLate if late else ZygoteLost)(self.lost)
        return child

    def kill(self, why: str) -> None:
        """End the zygote (and, with it, whatever it forked that is still running)."""
        with self.changed:
            self.lost = self.lost or why
            self.changed.notify_all()
        with contextlib.suppress(OSError):  # (neither fails on a zygote that has ended)
            self._proc.kill()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._proc.wait()
        with self.changed:  # its socket and its stderr's file: nothing is left open of it
            if self._last_words is None:
                self._last_words = self.errors()
                self._errors.close()
                self._sock.close()

    def alive(self) -> bool:
        return self.lost is None and self._proc.poll() is None

    def forget(self) -> None:
        """In a forked copy of this process: drop the copy of the socket (the zygote stays
        the parent's)."""
        self._sock.close()


_zygotes: dict[str, Zygote] = {}
_lock = threading.Lock()


def zygote(kind: str) -> Zygote:
    """This process's zygote of `kind`, started now if there is none or it is gone."""
    with _lock:
        found = _zygotes.get(kind)
        if found is None or not found.alive():
            if found is not None:
                found.kill("replaced")
            found = _zygotes[kind] = Zygote(kind)
        return found


def start_ahead(kinds: tuple[str, ...] = ("cells", "worker")) -> None:
    """Start this process's zygotes of `kinds` now, ahead of need: their imports overlap what
    the process does before its first sandbox (a zygote that dies meanwhile is replaced by the
    first sandbox that needs it)."""
    for kind in kinds:
        zygote(kind)


def stop_all() -> None:
    """End every zygote of this process (at exit; they would end with its socket anyway)."""
    with _lock:
        zygotes = list(_zygotes.values())
        _zygotes.clear()
    for z in zygotes:
        z.kill("this process is ending")


def _after_fork_in_child() -> None:
    for z in _zygotes.values():
        z.forget()
    _zygotes.clear()


atexit.register(stop_all)
os.register_at_fork(after_in_child=_after_fork_in_child)
