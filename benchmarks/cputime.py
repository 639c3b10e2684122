"""CPU-seconds of this process and everything it starts, sandboxes included.

`getrusage(RUSAGE_CHILDREN)` misses processes that bubblewrap's init leaves to the system to
reap, so where the machine has a cpuacct cgroup (v1) or cgroup v2 that this process may write,
the benchmark moves itself into a cgroup of its own and reads that cgroup's CPU time, which
counts every descendant however it ends. Elsewhere it falls back to getrusage, and says so.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


def _own(controller: str) -> Path | None:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return ROOT / controller / path.lstrip("/")
        if not names and controller == "" and (ROOT / "cgroup.controllers").exists():
            return ROOT / path.lstrip("/")
    return None


class CpuClock:
    """`seconds()`: CPU time used so far by this process tree."""

    def __init__(self) -> None:
        self.source = "getrusage (sandboxes partly missed)"
        self._usage: Path | None = None
        self._scale = 1e-9
        for controller, name, scale in (("cpuacct", "cpuacct.usage", 1e-9), ("", "cpu.stat", 1e-6)):
            parent = _own(controller)
            if parent is None or not os.access(parent, os.W_OK):
                continue
            try:
                group = parent / f"attention-bench-{os.getpid()}"
                group.mkdir(exist_ok=True)
                (group / "cgroup.procs").write_text(str(os.getpid()))
            except OSError:
                continue
            self._usage, self._scale = group / name, scale
            self._parent = parent
            self.source = f"the benchmark's own cgroup ({name})"
            break

    def seconds(self) -> float:
        if self._usage is not None:
            text = self._usage.read_text()
            if self._usage.name == "cpu.stat":
                text = next(
                    ln.split()[1] for ln in text.splitlines() if ln.startswith("usage_usec")
                )
            return int(text.split()[0]) * self._scale
        return sum(
            u.ru_utime + u.ru_stime
            for u in (
                resource.getrusage(resource.RUSAGE_SELF),
                resource.getrusage(resource.RUSAGE_CHILDREN),
            )
        )

    def release(self, pids: list[int]) -> None:
        """Move processes this one started out of its cgroup: their CPU time is not counted."""
        if self._usage is not None:
            for pid in pids:
                (self._parent / "cgroup.procs").write_text(str(pid))

    def close(self) -> None:
        """Back to the cgroup this process came from; remove its own."""
        if self._usage is not None:
            (self._parent / "cgroup.procs").write_text(str(os.getpid()))
            try:
                self._usage.parent.rmdir()
            except OSError:
                pass
            self._usage = None
