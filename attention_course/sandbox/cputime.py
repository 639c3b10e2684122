"""The CPU time of a process and of everything it started, read from /proc (where no cgroup
counts a sandbox's CPU time): user and system time of each living process of the tree, and of
the children each one has waited for. And the time processes spent ready to run but waiting for
a core (the scheduler's run delay): on a busy machine, code that neither sleeps nor computes."""

from __future__ import annotations

import os

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: str) -> tuple[int, int] | None:
    """(parent pid, clock ticks of CPU time, its waited-for children's included)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data.rsplit(b")", 1)[-1].split()  # after "(comm)", which may hold spaces
    try:  # fields 4 (ppid) and 14-17 (utime, stime, cutime, cstime) of proc(5)
        return int(fields[1]), sum(int(x) for x in fields[11:15])
    except (IndexError, ValueError):
        return None


def tree_cpu_seconds(root: int) -> float | None:
    """CPU seconds used by process `root` and its descendants (None if `root` is gone)."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return None
    for name in entries:
        found = _stat(name)
        if found is not None:
            parents[int(name)], ticks[int(name)] = found
    if root not in ticks:
        return None
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total / _TICK


def descendants(root: int) -> list[int]:
    """The living processes process `root` started, and theirs (parents first)."""
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return []
    children: dict[int, list[int]] = {}
    for name in entries:
        found = _stat(name)
        if found is not None:
            children.setdefault(found[0], []).append(int(name))
    out, todo = [], sorted(children.get(root, []))
    while todo:
        pid = todo.pop(0)
        out.append(pid)
        todo.extend(sorted(children.get(pid, [])))
    return out


def queued(pids: list[int]) -> tuple[float, bool]:
    """How the threads of the living processes `pids` wait for a core: the seconds they have
    spent runnable but not running, from /proc/<pid>/task/<tid>/schedstat (its second field, in
    nanoseconds, counted once a wait ends: 0 where the kernel keeps no such count), and whether
    one of them is runnable now (state R, or D: waiting for the disk), its wait not yet told."""
    total, now = 0, False
    for pid in pids:
        try:
            tasks = [e.name for e in os.scandir(f"/proc/{pid}/task")]
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                    total += int(f.read().split()[1])
                with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                    now = now or f.read().rsplit(b")", 1)[-1].split()[0] in (b"R", b"D")
            except (OSError, IndexError, ValueError):
                pass
    return total / 1e9, now
