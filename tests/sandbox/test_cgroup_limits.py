"""A sandbox's cgroup (sandbox/cgroups.py), observed from a process that joined it: its
process count and memory are bounded, its CPU time and peak memory are counted, and removing
it ends whatever is still inside."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from attention_course.sandbox import cgroups

pytestmark = pytest.mark.skipif(
    cgroups.available() is None, reason="no cgroup can be made for a sandbox on this machine"
)

MiB = 1024**2

FORKS = """
import os, sys, time
started = 0
for _ in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:  # stays (the cgroup's removal ends it), holding none of the parent's pipes
        os.close(1), os.close(2)
        time.sleep(60)
        os._exit(0)
    started += 1
print(started, flush=True)
"""

EAT = """
import sys
block = bytearray(int(sys.argv[1]) * 1024 * 1024)  # touched: really resident
print("ate", flush=True)
"""

SPIN = """
import time
end = time.process_time() + 0.5
while time.process_time() < end:
    pass
chunk = bytearray(48 * 1024 * 1024)
print("spun", flush=True)
"""


def inside(group: cgroups.Cgroup, script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        preexec_fn=group.join,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def group():
    made = cgroups.Cgroup.create(cgroups.fresh_name(), 96 * MiB, 8)
    assert made is not None
    yield made
    made.remove()


def test_a_sandbox_of_eight_processes_cannot_start_a_ninth(group):
    proc = inside(group, FORKS)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) == 7  # with the process that forks them: eight


def test_a_sandbox_of_96_mb_is_killed_past_it_and_not_before(group):
    assert inside(group, EAT, "32").stdout == "ate\n"
    past = inside(group, EAT, "160")
    assert past.returncode == -9 and "ate" not in past.stdout


def test_its_cpu_time_and_peak_memory_are_counted(group):
    assert group.cpu_seconds() == pytest.approx(0.0, abs=0.05)
    assert inside(group, SPIN).stdout == "spun\n"
    assert group.cpu_seconds() >= 0.5
    assert 48 * MiB <= group.peak_memory() <= 96 * MiB


def test_removing_it_ends_what_is_inside_and_the_cgroup(group):
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=group.join
    )
    assert group.pids() == [child.pid]
    group.remove()
    assert child.wait(timeout=10) == -9
    assert not any(d.exists() for d in group.dirs.values())
    assert group.pids() == []
    assert cgroups.fresh_name().startswith(f"{cgroups.PREFIX}{os.getpid()}-")
