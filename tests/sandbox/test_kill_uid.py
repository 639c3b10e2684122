"""What is left of a sandbox's uid after it stops: its live processes killed, its zombies (ended,
waiting for a parent that reaps them late) not waited for."""

from __future__ import annotations

import os
import signal
import time

import pytest

from attention_course.sandbox import confined, jail

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="processes of another uid need root")


def _status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status") as f:
        return {k: v.strip() for k, v in (ln.split(":", 1) for ln in f if ":" in ln)}


def _child_as(uid: int, live: bool) -> int:
    """A child process of `uid` that sleeps (`live`) or ends at once (a zombie: not reaped)."""
    pid = os.fork()
    if pid == 0:  # the child: plain os calls only
        try:
            os.setgid(uid)
            os.setuid(uid)
            if live:
                time.sleep(60)
        finally:
            os._exit(0)
    until = time.monotonic() + 10
    while time.monotonic() < until:
        found = _status(pid)
        if found["Uid"].split()[0] == str(uid) and (live or found["State"].startswith("Z")):
            return pid
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the child never ran as uid {uid}")


def test_live_processes_killed_zombies_not_waited_for(monkeypatch):
    uid = jail.HOST_UID_BASE - 1 - os.getpid()  # of no sandbox, no one else
    zombie, live = _child_as(uid, live=False), _child_as(uid, live=True)
    sleeps: list[float] = []
    real_sleep = time.sleep
    monkeypatch.setattr(confined.time, "sleep", lambda s: (sleeps.append(s), real_sleep(s)))
    try:
        confined._kill_uid(uid)
    finally:
        monkeypatch.undo()
        for pid in (live, zombie):
            os.kill(pid, signal.SIGKILL)  # (nothing to a zombie)
        live_status = os.waitpid(live, 0)[1]
        os.waitpid(zombie, 0)
    assert os.WIFSIGNALED(live_status) and os.WTERMSIG(live_status) == signal.SIGKILL
    # it looked again after the kill until only zombies were left, and stopped there: it did
    # not use up its three rounds waiting for zombies that only their parent can remove
    assert len(sleeps) < 3, sleeps
