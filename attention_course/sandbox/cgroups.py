"""A memory and process-count limit for a whole sandbox, where this machine lets us make a cgroup.

`Cgroup.create(name, memory, processes)` makes a child of this process's own cgroup (cgroup v1
`memory` and `pids` hierarchies, or cgroup v2 when its parent already delegates both
controllers); `join()` runs in the sandbox's first process before it execs, so everything the
sandbox starts is inside. Where no cgroup can be made (a read-only /sys/fs/cgroup, no
delegation), `create` returns None and the per-process limits (address space, RLIMIT_NPROC)
are what bounds the sandbox.

Each cgroup is named after the process that made it (`fresh_name`). A grading process that is
killed leaves its sandboxes' cgroups behind, empty once their processes are gone: each
`create` removes those of processes that no longer exist (ours only: the name says so), and a
process that ends normally removes whatever cgroup of its own is left.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attention_course.settings import PACING, STALE_CGROUP_SECONDS

ROOT = Path("/sys/fs/cgroup")
PREFIX = "attention-course-"  # every sandbox cgroup: PREFIX + the maker's pid + "-" + a nonce

# The files of a sandbox's cgroup, in each version: (hierarchy, file name). In v1 each controller
# is a hierarchy of its own (the folder of its name under ROOT); v2 has one, "" (ROOT itself).
FILES = {
    "v1": {
        "memory": ("memory", "memory.limit_in_bytes"),
        "swap": ("memory", "memory.memsw.limit_in_bytes"),  # memory and swap together
        "pids": ("pids", "pids.max"),
        "peak": ("memory", "memory.max_usage_in_bytes"),
        "oom": ("memory", "memory.oom_control"),  # "oom_kill N": processes killed
        "cpu": ("cpuacct", "cpuacct.usage"),  # nanoseconds (an optional hierarchy)
    },
    "v2": {
        "memory": ("", "memory.max"),
        "swap": ("", "memory.swap.max"),  # swap alone
        "pids": ("", "pids.max"),
        "peak": ("", "memory.peak"),
        "oom": ("", "memory.events"),  # "oom_kill N": processes killed
        "cpu": ("", "cpu.stat"),  # "usage_usec N"
    },
}
# What the files hold: v1's swap file limits memory and swap together (no swap: the memory
# limit), v2's swap alone (0); v1 counts CPU time in nanoseconds, v2 in microseconds.
NO_SWAP: dict[str, Callable[[int], int]] = {"v1": lambda memory: memory, "v2": lambda _: 0}
CPU_SECONDS: dict[str, Callable[[str], float]] = {
    "v1": lambda text: int(text) * 1e-9,
    "v2": lambda text: int(_counts(text)["usage_usec"]) * 1e-6,
}

_made: dict[str, Cgroup] = {}  # name -> cgroup made by this process and not removed yet
_made_lock = threading.Lock()


def fresh_name() -> str:
    """A new cgroup name that says which process made it."""
    return f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex}"


def _maker(name: str) -> int | None:
    """The pid in a name made by `fresh_name` (None for another name of ours, or not ours)."""
    head, dash, _ = name.removeprefix(PREFIX).partition("-")
    if not name.startswith(PREFIX) or not dash or not head.isdigit():
        return None
    return int(head)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: there all the same
        pass
    return True


def remove_stale(bases: list[Path]) -> list[str]:
    """Remove the sandbox cgroups under `bases` left by processes that are gone (and those of
    an older naming, once old enough): only empty ones go (the kernel refuses the others).
    Returns the names removed."""
    removed: list[str] = []
    now = time.time()
    for base in bases:
        try:
            entries = [e for e in os.scandir(base) if e.name.startswith(PREFIX) and e.is_dir()]
        except OSError:
            continue
        for entry in entries:
            maker = _maker(entry.name)
            if maker == os.getpid() or (maker is not None and _alive(maker)):
                continue
            try:
                if now - entry.stat().st_mtime < STALE_CGROUP_SECONDS:
                    continue  # it may have just been made, before its process joins
                os.rmdir(entry.path)
            except OSError:
                continue  # not empty, or gone already
            removed.append(entry.name)
    return removed


def _remove_ours() -> None:
    """At a normal exit: the cgroups this process made and did not remove."""
    with _made_lock:
        left = list(_made.values())
    for group in left:
        group.remove()


def _paths(pid: int | str = "self") -> dict[str, str]:
    """controller (or "" for v2) -> the cgroup path of process `pid` (this one's by default);
    empty where it cannot be read (the process is gone)."""
    paths: dict[str, str] = {}
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)  # the kernel's "id:controllers:path"
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _counts(text: str) -> dict[str, str]:
    """A flat keyed file's values ("key value" lines: memory.events, cpu.stat, oom_control)."""
    return dict(line.split() for line in text.splitlines())


@functools.cache
def _layout() -> tuple[str, dict[str, Path]] | None:
    """("v1", {"memory": dir, "pids": dir}) or ("v2", {"": dir}) to make children in."""
    own = _paths()
    v1: dict[str, Path] = {}
    for controller in ("memory", "pids"):
        if controller in own:
            base = ROOT / controller / own[controller].lstrip("/")
            if base.is_dir() and os.access(base, os.W_OK):
                v1[controller] = base
    if len(v1) == 2:
        if "cpuacct" in own:  # optional: the sandbox's CPU time, for benchmarks and notes
            base = ROOT / "cpuacct" / own["cpuacct"].lstrip("/")
            if base.is_dir() and os.access(base, os.W_OK):
                v1["cpuacct"] = base
        return "v1", v1
    if "" in own and (ROOT / "cgroup.controllers").exists():
        base = ROOT / own[""].lstrip("/")
        try:
            enabled = (base / "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if {"memory", "pids"} <= set(enabled) and os.access(base, os.W_OK):
            return "v2", {"": base}
    return None


class Cgroup:
    def __init__(self, version: str, dirs: dict[str, Path]):
        self.version = version
        self.dirs = dirs
        self.name = next(iter(dirs.values())).name
        self._procs = [str(d / "cgroup.procs") for d in dirs.values()]
        self._cpu_file: str | None = None

    @classmethod
    def create(cls, name: str, memory: int, processes: int) -> Cgroup | None:
        layout = _layout()
        if layout is None:
            return None
        version, bases = layout
        remove_stale(list(bases.values()))
        group = cls(version, {c: base / name for c, base in bases.items()})
        try:
            for d in group.dirs.values():
                d.mkdir()
            _write(group._file("memory"), memory)
            _write(group._file("swap"), NO_SWAP[version](memory), missing_ok=True)
            _write(group._file("pids"), processes)
        except OSError:
            group.remove()
            return None
        with _made_lock:
            if not _made:
                atexit.register(_remove_ours)
            _made[name] = group
        return group

    def procs_files(self) -> list[str]:
        """Where a process writes its pid to join (a zygote's child, before it enters)."""
        return list(self._procs)

    def join(self) -> None:
        """Move the calling process in (call it in the child, before exec)."""
        self.add(os.getpid())

    def add(self, process: int) -> None:
        """Move process `process` in."""
        pid = str(process).encode()
        for path in self._procs:  # plain os calls: this runs between fork and exec
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def _file(self, what: str) -> Path:
        """The file of FILES[version][what] (KeyError where its hierarchy is not there)."""
        hierarchy, name = FILES[self.version][what]
        return self.dirs[hierarchy] / name

    def peak_memory(self) -> int | None:
        try:
            return int(self._file("peak").read_text())
        except (OSError, ValueError):
            return None

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed for passing the memory limit (0 where
        not told). A limit only reached (memory reclaimed, nothing killed) is not counted."""
        try:
            return int(_counts(self._file("oom").read_text())["oom_kill"])
        except (KeyError, OSError, ValueError):
            return 0

    def cpu_seconds(self) -> float | None:
        """CPU time used so far by everything in the sandbox (None where not counted). Read
        several times a request (a sandbox's requests take a millisecond or two): plain os
        calls on the file's path, made once."""
        try:
            if self._cpu_file is None:
                self._cpu_file = os.fspath(self._file("cpu"))
            fd = os.open(self._cpu_file, os.O_RDONLY)
            try:
                text = os.read(fd, 4096).decode()
            finally:
                os.close(fd)
            return CPU_SECONDS[self.version](text)
        except (KeyError, OSError, ValueError):
            return None

    def pids(self) -> list[int]:
        found: set[int] = set()
        for d in self.dirs.values():
            try:
                found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return sorted(found)

    def kill(self) -> None:
        """Kill every process inside (once: one that is starting may be missed)."""
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):  # (it may have ended just now)
                os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Kill whatever is left inside and remove the cgroup: tried again while killed
        processes are still leaving it (settings.PACING: after 1 ms, then twice as long each
        time; the first try, right after the kill, usually finds one still there)."""
        for wait in PACING.cgroup_removal.tries():
            left = self.pids()
            for pid in left:
                with contextlib.suppress(ProcessLookupError):  # (it may have ended just now)
                    os.kill(pid, signal.SIGKILL)
            try:
                for d in self.dirs.values():
                    if d.exists():
                        d.rmdir()
                with _made_lock:
                    _made.pop(self.name, None)
                return
            except OSError:
                time.sleep(wait)


def _write(path: Path, value: int, missing_ok: bool = False) -> None:
    if missing_ok and not path.exists():
        return
    path.write_text(str(value))


@dataclass(frozen=True)
class Observed:
    """The cgroup limits the kernel applies to one process (for `doctor`): whether its cgroup
    is one of its own (not this process's), and its memory and process limits (None: none)."""

    own: bool
    memory: int | None
    processes: int | None


def _limit(path: Path) -> int | None:
    """A limit file's value; None where it is missing, unreadable, "max" or unlimited."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text.isdigit() or int(text) >= 1 << 62:  # v1's unlimited: a page-rounded 2**63
        return None
    return int(text)


def observe(pid: int) -> Observed | None:
    """What the kernel limits process `pid` to, read from its own cgroup membership (None
    where this machine gives sandboxes no cgroup, or `pid` is gone)."""
    layout = _layout()
    theirs = _paths(pid)
    if layout is None or not theirs:
        return None
    files, ours = FILES[layout[0]], _paths()

    def read(what: str) -> int | None:
        hierarchy, name = files[what]
        return _limit(ROOT / hierarchy / theirs.get(hierarchy, "").lstrip("/") / name)

    wanted = {files[what][0] for what in ("memory", "pids")}
    own = all(c in theirs and theirs[c] != ours.get(c) for c in wanted)
    return Observed(own, read("memory"), read("pids"))


def available() -> str | None:
    """ "cgroup v1" or "cgroup v2" where sandboxes get a cgroup of their own, else None."""
    layout = _layout()
    return f"cgroup {layout[0]}" if layout else None
