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
    assert group.oom_kills() == 0
    past = inside(group, EAT, "160")
    assert past.returncode == -9 and "ate" not in past.stdout
    assert group.oom_kills() == 1  # the kernel says why it was killed


def test_its_cpu_time_and_peak_memory_are_counted(group):
    assert group.cpu_seconds() == pytest.approx(0.0, abs=0.05)
    assert inside(group, SPIN).stdout == "spun\n"
    assert 0.5 <= group.cpu_seconds() <= 5.0  # its half second of spinning, and start-up
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


def test_only_the_stale_cgroups_of_gone_processes_are_removed(tmp_path):
    """`remove_stale` in a folder of its own: the empty cgroups of processes that are gone,
    and those of an older naming once old enough, go; this process's, a live process's, a
    fresh one's and every other name stay."""
    import time

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    names = {
        f"{cgroups.PREFIX}{dead}-0a1b": "gone",
        f"{cgroups.PREFIX}oldstyle": "gone",
        f"{cgroups.PREFIX}abc-123": "gone",  # an older naming: no pid first
        f"{cgroups.PREFIX}{os.getpid()}": "gone",  # no nonce: not this process's naming
        f"{cgroups.PREFIX}{os.getpid()}-0a1b": "kept",
        f"{cgroups.PREFIX}{os.getppid()}-0a1b": "kept",
        "another-tool-1-0a1b": "kept",
    }
    then = time.time() - 3600
    for name in names:
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (then, then))
    (tmp_path / f"{cgroups.PREFIX}fresh").mkdir()  # just made: its process may join yet
    names[f"{cgroups.PREFIX}fresh"] = "kept"
    removed = cgroups.remove_stale([tmp_path, tmp_path / "missing"])
    assert sorted(removed) == sorted(n for n, fate in names.items() if fate == "gone")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        n for n, fate in names.items() if fate == "kept"
    )


# A function that fills the sandbox's /tmp (memory the cgroup counts, but no process's address
# space) and then takes more in its own process: past the whole sandbox's memory limit, with
# each process under its own. Its worker is the largest process there: the kernel kills it.
HOG = """
import os, signal
def hog(x):
    for i in range(5):
        with open(f"/tmp/fill{i}", "wb") as f:
            f.write(b"\\1" * (60 * 1024 * 1024))
    block = bytearray(300 * 1024 * 1024)
    return x
def killed(x):
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_worker_killed_for_its_memory_is_told_so_and_another_kill_is_not():
    from attention_course.sandbox.program import Call, run_program
    from attention_course.settings import Limits

    limits = Limits(memory_bytes=512 * MiB, tmp_bytes=1024 * MiB)
    run = run_program([("hog", HOG)], [Call("hog", "hog", (1,)), Call("killed", "killed", (1,))],
                      limits)  # fmt: skip
    hog, killed = run.outcomes["hog"], run.outcomes["killed"]
    assert (hog.status, hog.detail) == ("crashed", "was killed: it used more than the memory limit")
    assert killed.status == "crashed" and "memory limit" not in killed.detail, killed
    assert killed.detail.startswith("was killed"), killed
    assert run.workers == 2


def test_the_limits_a_process_is_held_to_are_read_from_its_own_cgroup(group):
    """What `doctor` reports of each sandbox process: a process in the group is in a cgroup of
    its own, with the group's limits; this process is not; a process that is gone, nothing."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=group.join
    )
    try:
        assert cgroups.observe(child.pid) == cgroups.Observed(True, 96 * MiB, 8)
        for name in ("memory.memsw.limit_in_bytes", "memory.limit_in_bytes"):  # no limit
            if (group.dirs["memory"] / name).exists():  # (memsw: where swap is counted)
                (group.dirs["memory"] / name).write_text("-1")
        (group.dirs["pids"] / "pids.max").write_text("max")
        assert cgroups.observe(child.pid) == cgroups.Observed(True, None, None)
    finally:
        child.kill()
        child.wait()
    assert cgroups.observe(child.pid) is None
    assert cgroups.observe(os.getpid()).own is False
