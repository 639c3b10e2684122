"""Sandbox cgroups do not pile up on a long-lived host: a grading process killed with its
sandboxes running leaves their cgroups behind, and the next sandbox to start removes them
(empty ones, of processes that are gone: never another live process's); a grading process that
ends normally leaves none."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from attention_course.sandbox import cgroups

pytestmark = pytest.mark.skipif(
    cgroups.available() is None, reason="no cgroup can be made for a sandbox on this machine"
)

MAKE = """
import sys, time
from attention_course.sandbox import cgroups
group = cgroups.Cgroup.create(cgroups.fresh_name(), 1 << 30, 32)
print(group.name, flush=True)
if sys.argv[1] == "wait":
    time.sleep(120)
"""


def _bases():
    layout = cgroups._layout()
    assert layout is not None
    return list(layout[1].values())


def _exists(name: str) -> bool:
    return any((base / name).exists() for base in _bases())


def _backdate(name: str) -> None:
    """As if made an hour ago (older than a cgroup that is about to be joined)."""
    then = time.time() - 3600
    for base in _bases():
        os.utime(base / name, (then, then))


def _made_by_a_child(how: str) -> tuple[subprocess.Popen, str]:
    child = subprocess.Popen([sys.executable, "-c", MAKE, how], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    return child, child.stdout.readline().strip()


def test_a_process_that_ends_normally_leaves_no_cgroup():
    child, name = _made_by_a_child("exit")
    assert child.wait(timeout=60) == 0
    assert name.startswith(cgroups.PREFIX) and not _exists(name)


def test_the_cgroups_of_a_killed_process_are_removed_when_a_sandbox_starts():
    killed, stale = _made_by_a_child("wait")
    alive, kept = _made_by_a_child("wait")  # another grading process, still running
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert _exists(stale) and _exists(kept)
        busy = f"{cgroups.PREFIX}{killed.pid}-{os.urandom(6).hex()}"  # gone maker, a process in
        for base in _bases():
            (base / busy).mkdir()
        sleeper = subprocess.Popen(["sleep", "120"])
        for base in _bases():
            (base / busy / "cgroup.procs").write_text(str(sleeper.pid))
        for name in (stale, kept, busy):
            _backdate(name)
        try:
            group = cgroups.Cgroup.create(cgroups.fresh_name(), 1 << 30, 32)  # a sandbox starts
            assert group is not None
            group.remove()
            assert not _exists(stale)
            assert _exists(kept)  # its process is alive
            assert _exists(busy)  # not empty: never removed from under a process
        finally:
            sleeper.kill()
            sleeper.wait()
            for base in _bases():
                if (base / busy).exists():
                    (base / busy).rmdir()
    finally:
        alive.kill()
        alive.wait()
        _backdate(kept)
        cgroups.remove_stale(_bases())
    assert not _exists(kept)
    fresh, young = _made_by_a_child("wait")  # killed at once: its cgroup may be joined yet
    fresh.kill()
    fresh.wait()
    cgroups.remove_stale(_bases())
    assert _exists(young)
    _backdate(young)
    cgroups.remove_stale(_bases())
    assert not _exists(young)


def test_a_cgroup_whose_limits_the_kernel_refuses_is_removed_and_none_is_used():
    name = cgroups.fresh_name()
    assert cgroups.Cgroup.create(name, 1 << 30, -5) is None  # no such number of processes
    assert not _exists(name)


def test_killing_a_cgroup_kills_every_process_it_holds_and_no_other():
    group = cgroups.Cgroup.create(cgroups.fresh_name(), 1 << 30, 32)
    assert group is not None
    inside = [subprocess.Popen(["sleep", "120"], preexec_fn=group.join) for _ in range(2)]
    outside = subprocess.Popen(["sleep", "120"])
    try:
        assert group.pids() == sorted(p.pid for p in inside)
        group.kill()
        assert [p.wait(timeout=10) for p in inside] == [-signal.SIGKILL] * 2
        assert outside.poll() is None
    finally:
        group.remove()
        for p in [*inside, outside]:
            p.kill()
            p.wait()
