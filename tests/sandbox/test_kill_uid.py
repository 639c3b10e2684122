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
    zombie = _child_as(uid, live=False)
    sleeps: list[float] = []
    real_sleep = time.sleep
    monkeypatch.setattr(confined.time, "sleep", lambda s: (sleeps.append(s), real_sleep(s)))
    live = None
    try:
        # only a zombie of the uid is left: it is not waited for (no second look at all)
        confined._kill_uid(uid)
        assert sleeps == []
        # a live process of the uid is killed (the looks after the kill wait for it to end,
        # as long as the machine takes: their number is not the point here)
        live = _child_as(uid, live=True)
        confined._kill_uid(uid)
        until = time.monotonic() + 30
        while not _status(live)["State"].startswith("Z") and time.monotonic() < until:
            real_sleep(0.01)  # killed: it ends (a zombie until this test reaps it)
        assert _status(live)["State"].startswith("Z")
    finally:
        monkeypatch.undo()
        for pid in (live, zombie):
            if pid is not None:
                os.kill(pid, signal.SIGKILL)  # (nothing to a zombie)
        live_status = os.waitpid(live, 0)[1] if live is not None else 0
        os.waitpid(zombie, 0)
    assert os.WIFSIGNALED(live_status) and os.WTERMSIG(live_status) == signal.SIGKILL
