"""`attention-course doctor`: is student code really contained here? Every guarantee, tried.

`diagnose` starts a sandboxed process exactly as grading does and has it try, from the
inside, what a hostile student would: read the course folder, reach a port this process
listens on, make a user or mount namespace, write outside /tmp, and every system call the
filter denies (ptrace, mount, bpf, ...). Each guarantee is reported with what was found.
"""

from __future__ import annotations

import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_course.sandbox import cgroups, confined, jail, syscall_filter
from attention_course.sandbox.confined import Confined, Died
from attention_course.sandbox.zygotes import ZygoteLost
from attention_course.settings import DEFAULT, MiB


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def diagnose(course: Path) -> list[Check]:
    """Every guarantee of the sandbox, checked on this machine (SandboxUnavailable if none)."""
    status = confined.require()
    checks = [Check("sandbox", True, status.detail)]
    course = course.resolve()
    entries = sorted(p.name for p in course.iterdir()) if course.is_dir() else []
    # The Python environment may live inside the course folder: it is mounted, read-only.
    python = {
        Path(p).relative_to(course).parts[0]
        for p in jail.python_paths()
        if Path(p).is_relative_to(course)
    }
    trials = syscall_filter.trials()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        request = {
            "op": "probe",
            "course": str(course),
            "entries": entries,
            "port": server.getsockname()[1],
            "calls": [vars(t) for t in trials],
        }
        with Confined("probe.py", {}, DEFAULT) as process:
            process.start(time.monotonic() + 60)
            seen = _from_the_host(process)  # while the probe waits for its request
            found = process.request(request, timeout=30)[0]["found"]
    unfiltered = _unfiltered_namespaces()
    visible = sorted(set(found["visible"]) - python)
    shown = f"nothing of {course} is visible inside"
    if python:
        shown += f" (but its Python environment {', '.join(sorted(python))}, read-only)"
    if visible:
        shown = f"visible inside: {', '.join(visible)}"
    namespaces = found["user_namespace"] or found["mount_namespace"] or unfiltered
    made = "unshare() of a user or mount namespace fails"
    made += f" (without the filter: {unfiltered})" if unfiltered else ", with the filter or not"
    reach = "can" if found["reaches_host_port"] else "cannot"
    writable = " and ".join(
        p for p, key in (("/", "writes_root"), ("/usr", "writes_usr")) if found[key]
    )
    checks += [
        _unprivileged(found, seen, status.mode),
        Check("course hidden", not visible, shown),
        Check(
            "no network",
            not found["reaches_host_port"],
            f"a port listening on 127.0.0.1 here {reach} be reached",
        ),
        Check("no new namespaces", not namespaces, made),
        Check(
            "read-only system",
            not writable,
            f"{writable} can be written" if writable else "/ and /usr cannot be written",
        ),
        Check(
            "private /tmp",
            found["tmp_bytes"] <= DEFAULT.tmp_bytes + MiB,
            f"{found['tmp_bytes'] // MiB} MiB, the only writable place",
        ),
        _limit(
            "process limit",
            (found["nproc"], f"{found['nproc']} processes and threads of its own user"),
            seen.cgroups,
            ("processes", f"{DEFAULT.processes} in the whole sandbox"),
            status.cgroup,
            DEFAULT.processes,
        ),
        _limit(
            "memory limit",
            (found["address_space"], f"{_size(found['address_space'])} per process"),
            seen.cgroups,
            ("memory", f"{_size(DEFAULT.memory_bytes)} for the whole sandbox"),
            status.cgroup,
            DEFAULT.memory_bytes,
        ),
        Check(
            "file size limit",
            found["file_size"] == DEFAULT.file_bytes,
            f"a file of at most {_size(found['file_size'])} can be written",
        ),
        _filtered(found["seccomp"], found["calls"], found["other_abis"], trials),
    ]
    return checks


@dataclass
class HostView:
    """The sandbox's processes as the host sees them (but its first, which lays it out)."""

    uids: dict[int, set[int]]  # pid -> its real, effective, saved and file-system uids
    groups: dict[int, list[str]]  # pid -> its supplementary groups
    cgroups: list[cgroups.Observed | None]  # each one's cgroup limits


def _from_the_host(process: Confined) -> HostView:
    view = HostView({}, {}, [])
    for pid in process.processes():
        try:
            status = dict(
                line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            )
        except (OSError, ValueError):
            continue
        view.uids[pid] = {int(u) for u in status["Uid"].split()}
        view.groups[pid] = status.get("Groups", "").split()
        view.cgroups.append(cgroups.observe(pid))
    return view


def _unprivileged(found: dict[str, Any], seen: HostView, mode: str) -> Check:
    """No capabilities inside, no supplementary groups, and, seen from the host, never root:
    as root, every process of the sandbox runs as its own fresh uid."""
    uids = set().union(*seen.uids.values()) if seen.uids else set()
    groups = sorted({g for gs in seen.groups.values() for g in gs})
    problems = []
    if found["capabilities"] != 0:
        problems.append(f"capabilities {found['capabilities']:#x}")
    if not found["no_new_privs"]:
        problems.append("no_new_privs not set (a setuid program would gain privileges)")
    if not uids:
        problems.append("no process of the sandbox was seen from the host")
    elif 0 in uids or (mode == "root" and len(uids) != 1):
        problems.append(f"host uids {', '.join(map(str, sorted(uids)))}")
    if mode == "root" and (groups or found["groups"]):
        problems.append(f"supplementary groups {', '.join(groups) or found['groups']}")
    if problems:
        return Check("unprivileged", False, "; ".join(problems))
    who = f"host uid {min(uids)}" if mode == "root" else "your own uid, in a user namespace"
    detail = f"{who}, no capabilities, no supplementary groups, no_new_privs"
    return Check("unprivileged", True, detail)


def _size(n: int) -> str:
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n} bytes"


def _limit(
    name: str,
    inside: tuple[int, str],
    seen: list[cgroups.Observed | None],
    whole: tuple[str, str],
    cgroup: str | None,
    expected: int,
) -> Check:
    """A limit seen from inside, (value, how it reads: per process or of its user), and,
    where sandboxes get a cgroup, on the cgroup of each of the sandbox's processes (field of
    cgroups.Observed, how it reads)."""
    value, text = inside
    field, text_whole = whole
    ok, detail = value == expected, text
    if not cgroup:
        return Check(name, ok, f"{detail} (no cgroup can be made here: not for the whole sandbox)")
    values = {getattr(g, field) if g is not None and g.own else None for g in seen}
    if values == {expected}:
        return Check(name, ok, f"{detail}, and {text_whole} ({cgroup})")
    got = ", ".join(sorted("none" if v is None else str(v) for v in values)) or "none"
    return Check(name, False, f"{detail}; the sandbox's own cgroup ({cgroup}) allows {got}")


def _unfiltered_namespaces() -> str:
    """What a sandbox without its system call filter made ("" when nothing): the layers under
    the filter must stop a user namespace too (--disable-userns)."""
    request = {"op": "probe", "course": "/", "entries": [], "port": 0, "calls": []}
    try:
        with Confined("probe.py", {}, DEFAULT, filtered=False) as process:
            process.start(time.monotonic() + 60)
            found = process.request(request, timeout=30)[0]["found"]
    except (Died, ZygoteLost) as exc:
        return f"the sandbox did not run ({exc})"
    return "made a user namespace" if found["user_namespace"] else ""


def _filtered(
    mode: int, calls: dict[str, str], abis: dict[str, str], trials: list[syscall_filter.Trial]
) -> Check:
    """Whether the sandbox ran under a seccomp filter (mode 2) that denied every call tried,
    and let no call through another ABI run (x86-64: x32 and i386)."""
    name = "system call filter"
    if mode != 2:
        return Check(name, False, f"no seccomp filter in the sandbox (Seccomp: {mode})")
    wrong = [
        f"{t.name} ({calls.get(t.name, 'not tried')})"
        for t in trials
        if calls.get(t.name) != f"errno {t.errno}"
    ]
    wrong += [f"getpid through {abi} ran" for abi, what in abis.items() if what == "ran"]
    if wrong:
        return Check(name, False, f"not denied: {', '.join(wrong)}")
    shown = ", ".join(t.name for t in trials[:4])
    detail = f"seccomp: {len(trials)} system calls tried, each denied ({shown}, ...)"
    killed = [abi for abi, what in abis.items() if what == f"killed by signal {int(signal.SIGSYS)}"]
    if killed:
        detail += f"; a call through {' or '.join(killed)} kills the process"
    return Check(name, True, detail)
