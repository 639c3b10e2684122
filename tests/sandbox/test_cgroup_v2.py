"""cgroup v2, which neither this machine nor CI gives sandboxes (both delegate cgroup v1's memory
and pids hierarchies): the engine's side of it, against a folder laid out as the kernel lays out
a delegated cgroup v2 tree (Documentation/admin-guide/cgroup-v2.rst). The grading process's
cgroup lists "memory" and "pids" in its cgroup.subtree_control; a cgroup made in it comes with
its interface files; removing it takes them along. Which files the engine writes and reads,
with which values and in which format, is checked here; that the kernel enforces the limits is
tested on cgroup v1 (test_cgroup_limits.py)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attention_course.sandbox import cgroups

MiB = 1024**2

# A new cgroup's interface files, as the kernel makes them (the ones the engine uses).
KERNEL_FILES = {
    "cgroup.procs": "",
    "memory.max": "max\n",
    "memory.swap.max": "max\n",
    "pids.max": "max\n",
    "memory.peak": "0\n",
    "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n",
    "cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n",
}


class Tree:
    """The model: /sys/fs/cgroup in a temporary folder, the grading process's cgroup
    /grading.slice in it."""

    def __init__(self, root: Path, controllers: str):
        self.root, self.parent = root, root / "grading.slice"
        self.parent.mkdir(parents=True)
        (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
        (self.parent / "cgroup.subtree_control").write_text(controllers + "\n")
        (self.parent / "memory.max").write_text("max\n")
        (self.parent / "pids.max").write_text("max\n")
        self.files = dict(KERNEL_FILES)

    def paths(self, pid: int | str = "self") -> dict[str, str]:
        """/proc/PID/cgroup of the model: the one line of cgroup v2, "0::PATH"."""
        for procs in self.parent.glob("*/cgroup.procs"):
            if str(pid) in procs.read_text().split():
                return {"": f"/grading.slice/{procs.parent.name}"}
        return {"": "/grading.slice"}


def _living(pid: str) -> bool:
    """Whether process `pid` runs (a zombie has left its cgroup)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def tree(tmp_path, monkeypatch):
    def make(controllers: str = "cpu memory pids") -> Tree:
        model = Tree(tmp_path / "cgroup", controllers)
        mkdir, rmdir = Path.mkdir, Path.rmdir

        def made(self, *args, **kwargs):  # a cgroup comes with its interface files
            mkdir(self, *args, **kwargs)
            if self.parent == model.parent:
                for name, text in model.files.items():
                    (self / name).write_text(text)

        def removed(self):  # and goes with them, refused while a living process is inside
            if self.parent != model.parent:
                rmdir(self)
            elif any(_living(pid) for pid in (self / "cgroup.procs").read_text().split()):
                raise OSError(errno.EBUSY, "a process is inside", str(self))
            else:
                shutil.rmtree(self)

        monkeypatch.setattr(Path, "mkdir", made)
        monkeypatch.setattr(Path, "rmdir", removed)
        monkeypatch.setattr(cgroups, "ROOT", model.root)
        monkeypatch.setattr(cgroups, "_paths", model.paths)
        cgroups._layout.cache_clear()
        return model

    yield make
    cgroups._layout.cache_clear()


def test_a_sandbox_cgroup_is_made_with_its_limits_and_no_swap(tree):
    model = tree()
    assert cgroups.available() == "cgroup v2"
    group = cgroups.Cgroup.create("attention-course-1-ab", 96 * MiB, 8)
    assert group is not None
    made = model.parent / "attention-course-1-ab"
    assert group.dirs == {"": made}
    written = {name: (made / name).read_text() for name in ("memory.max", "memory.swap.max")}
    assert written == {"memory.max": str(96 * MiB), "memory.swap.max": "0"}
    assert (made / "pids.max").read_text() == "8"
    group.remove()
    assert not made.exists()


def test_without_swap_accounting_the_cgroup_is_made_all_the_same(tree):
    model = tree()
    del model.files["memory.swap.max"]
    group = cgroups.Cgroup.create("attention-course-1-cd", 96 * MiB, 8)
    assert group is not None
    assert (group.dirs[""] / "memory.max").read_text() == str(96 * MiB)
    # nothing written where the kernel has no file (cgroupfs makes none: the write would fail)
    assert sorted(p.name for p in group.dirs[""].iterdir()) == sorted(model.files)
    group.remove()


@pytest.mark.parametrize("controllers", ["cpu memory", "pids", ""])
def test_no_cgroup_where_memory_and_pids_are_not_both_delegated(tree, controllers):
    tree(controllers)
    assert cgroups.available() is None
    assert cgroups.Cgroup.create("attention-course-1-ef", 96 * MiB, 8) is None


def test_no_cgroup_where_the_parents_controllers_cannot_be_read(tree):
    model = tree()
    (model.parent / "cgroup.subtree_control").unlink()
    assert cgroups.available() is None
    assert cgroups.Cgroup.create("attention-course-1-cr", 96 * MiB, 8) is None


def test_what_a_sandbox_used_is_read_in_the_kernels_format(tree):
    model = tree()
    group = cgroups.Cgroup.create("attention-course-1-gh", 96 * MiB, 8)
    assert group is not None
    made = model.parent / "attention-course-1-gh"
    assert (group.cpu_seconds(), group.peak_memory(), group.oom_kills()) == (0.0, 0, 0)
    (made / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
    (made / "memory.peak").write_text("123456789\n")
    (made / "memory.events").write_text(
        "low 0\nhigh 0\nmax 40\noom 3\noom_kill 2\noom_group_kill 0\n"
    )
    assert (group.cpu_seconds(), group.peak_memory(), group.oom_kills()) == (2.5, 123456789, 2)
    group.remove()


def test_an_older_kernel_without_the_peak_nor_the_kills_counted_says_none(tree):
    """memory.peak is from Linux 5.19: before it, no peak; a count that is not there is no
    kill said (the reason stays "out of memory?")."""
    model = tree()
    for name in ("memory.peak", "memory.events", "cpu.stat"):
        del model.files[name]
    group = cgroups.Cgroup.create("attention-course-1-kl", 96 * MiB, 8)
    assert group is not None
    assert (group.peak_memory(), group.oom_kills(), group.cpu_seconds()) == (None, 0, None)
    group.remove()


def test_a_process_joins_is_observed_in_and_is_killed_with_its_cgroup(tree):
    model = tree()
    group = cgroups.Cgroup.create("attention-course-1-ij", 96 * MiB, 8)
    assert group is not None
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=group.join
    )
    try:
        assert group.pids() == [child.pid]
        assert cgroups.observe(child.pid) == cgroups.Observed(True, 96 * MiB, 8)
        assert cgroups.observe(os.getpid()) == cgroups.Observed(False, None, None)
        group.remove()
        assert child.wait(timeout=10) == -9
        assert not (model.parent / "attention-course-1-ij").exists()
    finally:
        child.kill()
        child.wait()
