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

from attention_course.sandbox import jail, syscall_filter
from attention_course.sandbox.confined import Confined
from attention_course.settings import DEFAULT, MiB


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def diagnose(course: Path) -> list[Check]:
    """Every guarantee of the sandbox, checked on this machine (SandboxUnavailable if none)."""
    status = jail.require()
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
            found = process.request(request, timeout=30)[0]["found"]
            host_uid = process.host_uid
    who = f"host uid {host_uid}" if host_uid is not None else "your own uid, in a user namespace"
    memory = f"{DEFAULT.memory_bytes // MiB} MiB per process"
    if status.cgroup:
        memory += f", and for the whole sandbox ({status.cgroup})"
    else:
        memory += " (no cgroup can be made here: not for the sandbox as a whole)"
    seen = sorted(set(found["visible"]) - python)
    hidden = not seen
    shown = f"nothing of {course} is visible inside"
    if python:
        shown += f" (but its Python environment {', '.join(sorted(python))}, read-only)"
    if seen:
        shown = f"visible inside: {', '.join(seen)}"
    namespaces = found["user_namespace"] or found["mount_namespace"]
    checks += [
        Check("unprivileged", found["capabilities"] == 0, f"{who}, no capabilities"),
        Check("course hidden", hidden, shown),
        Check(
            "no network",
            not found["reaches_host_port"],
            "a port listening on 127.0.0.1 here cannot be reached",
        ),
        Check("no new namespaces", not namespaces, "unshare() of a user or mount namespace fails"),
        Check(
            "read-only system",
            not found["writes_root"] and not found["writes_usr"],
            "/ and /usr cannot be written",
        ),
        Check(
            "private /tmp",
            found["tmp_bytes"] <= DEFAULT.tmp_bytes + MiB,
            f"{found['tmp_bytes'] // MiB} MiB, the only writable place",
        ),
        Check(
            "process limit",
            found["nproc"] == DEFAULT.processes,
            f"at most {found['nproc']} processes and threads",
        ),
        Check("memory limit", found["address_space"] == DEFAULT.memory_bytes, memory),
        _filtered(found["seccomp"], found["calls"], found["other_abis"], trials),
    ]
    return checks


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
