"""The system call filter of every sandbox (seccomp): what student code never needs, denied.

Student code is numpy on a CPU: it reads and writes files in its /tmp, maps memory, starts
threads and perhaps a subprocess. It never needs to inspect another process, mount anything,
make a namespace, touch the kernel's keyrings, load BPF programs or modules, or set the clock.
Those calls are the kernel's widest doors for a process that already runs code, so each one
fails with EPERM inside the sandbox, whatever its arguments (the rest is allowed: a deny list).

- `clone` fails with EPERM when it asks for any new namespace (`fork` and threads still work);
  `clone3` fails with ENOSYS, as in Docker's and Flatpak's filters: a filter cannot read its
  flags (they lie in memory), and the C library then falls back to `clone`, which is checked.
- Only the machine's own architecture passes: a system call of another ABI on the same kernel
  (x86's 32-bit `int 0x80`, or x32 numbers on x86-64) kills the process, so the deny list
  cannot be walked around by the same call under another number.

The filter is compiled by libseccomp (through `pyseccomp`) once per grading process, and
bubblewrap loads it (`--seccomp FD`) as the last step before it starts the sandbox's first
program, after the sandbox is made and before any of its code runs; it cannot be removed. Where
it cannot be built, `available` says why, and the sandbox is not made (`confined.probe`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# Each group: the calls it denies, and why student code has no use for them.
DENIED: dict[str, tuple[str, ...]] = {
    # another process's memory or state
    "process inspection": (
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "kcmp",
        "pidfd_getfd",
        "process_madvise",
    ),
    # the file system's layout (the sandbox's is fixed) and other namespaces
    "mounts and namespaces": (
        "mount",
        "umount2",
        "pivot_root",
        "chroot",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "move_mount",
        "open_tree",
        "mount_setattr",
        "unshare",
        "setns",
    ),
    # the kernel's own interfaces, the usual targets of a local exploit
    "kernel interfaces": (
        "keyctl",
        "add_key",
        "request_key",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "kexec_load",
        "kexec_file_load",
        "init_module",
        "finit_module",
        "delete_module",
        "uselib",
    ),
    # the machine's state: its clock, hostname, swap, accounting, quotas, log, I/O ports
    "machine state": (
        "personality",
        "acct",
        "swapon",
        "swapoff",
        "reboot",
        "sethostname",
        "setdomainname",
        "vhangup",
        "iopl",
        "ioperm",
        "open_by_handle_at",
        "name_to_handle_at",
        "fanotify_init",
        "quotactl",
        "quotactl_fd",
        "syslog",
        "lookup_dcookie",
        "settimeofday",
        "clock_settime",
        "clock_adjtime",
        "adjtimex",
    ),
}

# clone()'s flags that make a namespace (CLONE_NEWTIME is clone3's and unshare's alone: in
# clone() its bit is part of the exit signal).
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
CLONE_THREAD = 0x00010000  # alone (without CLONE_SIGHAND) the kernel refuses it: EINVAL


class FilterUnavailable(RuntimeError):
    """No filter can be built here; the message says why and how to fix it."""


def denied() -> list[str]:
    """Every call the filter denies outright, in the order of DENIED."""
    return [name for group in DENIED.values() for name in group]


def _library() -> Any:
    try:
        import pyseccomp
    except ImportError:
        raise FilterUnavailable("pyseccomp is not installed (pip install pyseccomp)") from None
    except (RuntimeError, OSError):  # pyseccomp found no libseccomp to load
        raise FilterUnavailable(
            "libseccomp is not installed (apt-get install libseccomp2)"
        ) from None
    return pyseccomp


@functools.cache
def program() -> bytes:
    """The compiled filter (a classic BPF program, as bubblewrap loads it); built once."""
    sc = _library()
    try:
        rules = sc.SyscallFilter(sc.ALLOW)
        rules.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        for name in denied():
            rules.add_rule(sc.ERRNO(errno.EPERM), name)
        for flag in NAMESPACE_FLAGS.values():
            rules.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        fd = os.memfd_create("attention-course-seccomp", os.MFD_CLOEXEC)
        try:
            with os.fdopen(os.dup(fd), "wb") as out:
                rules.export_bpf(out)
            return os.pread(fd, os.fstat(fd).st_size, 0)
        finally:
            os.close(fd)
    except (OSError, ValueError, RuntimeError) as exc:
        raise FilterUnavailable(f"libseccomp cannot build the filter ({exc})") from None


def available() -> str | None:
    """None where the filter can be built, else why not (one line)."""
    try:
        program()
    except FilterUnavailable as exc:
        return str(exc)
    return None


@contextlib.contextmanager
def descriptor() -> Iterator[int]:
    """A fresh file descriptor holding the filter, for one bubblewrap to read (it reads to the
    end, so no two sandboxes share one); closed here once the sandbox has started."""
    fd = os.memfd_create("attention-course-seccomp")  # passed on only through pass_fds
    try:
        os.write(fd, program())
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Trial:
    """One denied call as `doctor` tries it from inside: arguments that do nothing even where
    no filter stops it (the sandbox has no capabilities), and the error the filter gives."""

    name: str
    number: int
    args: tuple[int, ...]
    errno: int


def trials() -> list[Trial]:
    """Every denied call, and clone with each namespace flag, as `doctor` tries them."""
    sc = _library()

    def number(name: str) -> int:
        return int(sc.resolve_syscall(sc.Arch.NATIVE, name))

    out = [Trial(name, number(name), (-1,) * 6, errno.EPERM) for name in denied()]
    for flag, bit in NAMESPACE_FLAGS.items():
        out.append(
            Trial(f"clone({flag})", number("clone"), (bit | CLONE_THREAD, 0, 0, 0, 0), errno.EPERM)
        )
    out.append(Trial("clone3", number("clone3"), (0, 0), errno.ENOSYS))
    return out
