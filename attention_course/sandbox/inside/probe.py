"""What a sandboxed process can do, tried from the inside (for `attention-course doctor`).

Runs as a script inside the sandbox, answers one request with what it found: its uid,
capabilities, groups and limits, whether it can see the course folder, reach a port the grading
process listens on, make a user namespace, write outside /tmp, how large /tmp is, its seccomp
mode, and what each system call the request names returned (`syscall_filter.trials`: the error
each gave, or what it returned where it did not fail).
"""

import ctypes
import mmap
import os
import resource
import socket
import sys
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import boot  # noqa: E402
import wire  # noqa: E402

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000


def _status(field: str) -> str:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return line.split()[1]
    return ""


def _capabilities() -> int:
    """Every capability this process holds in any of its sets (-1 where not shown)."""
    sets = [_status(name) for name in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh")]
    if "" in sets:
        return -1
    found = 0
    for text in sets:
        found |= int(text, 16)
    return found


def _can_unshare(flags: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    if os.fork() == 0:  # try in a child, so this process stays as it is
        os._exit(0 if libc.unshare(flags) == 0 else 1)
    _, status = os.wait()
    return os.waitstatus_to_exitcode(status) == 0


def _seccomp_mode() -> int:
    mode = _status("Seccomp")
    return int(mode) if mode else -1


def _try_calls(calls: list[dict[str, Any]]) -> dict[str, str]:
    """Each call's outcome: "errno N", or "returned N" where it did not fail."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    out = {}
    for call in calls:
        ctypes.set_errno(0)
        args = [ctypes.c_long(int(a)) for a in call["args"]]
        result = libc.syscall(ctypes.c_long(int(call["number"])), *args)
        out[str(call["name"])] = (
            f"errno {ctypes.get_errno()}" if result == -1 else f"returned {result}"
        )
    return out


# getpid through another ABI of an x86-64 kernel: x32's number, and i386's `int 0x80`
# (machine code: mov eax, 20; int 0x80; ret).
X32_GETPID = 0x40000000 | 39
I386_GETPID = b"\xb8\x14\x00\x00\x00\xcd\x80\xc3"


def _other_abis() -> dict[str, str]:
    """What getpid through each other ABI did, in a child: "killed by signal N" (SIGSYS: the
    filter), "ran", or "failed" (the kernel has no such ABI); nothing where not x86-64."""
    if os.uname().machine != "x86_64":
        return {}
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def i386() -> int:
        code = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        code.write(I386_GETPID)
        address = ctypes.addressof(ctypes.c_char.from_buffer(code))
        return int(ctypes.CFUNCTYPE(ctypes.c_int)(address)())

    def x32() -> int:
        return int(libc.syscall(ctypes.c_long(X32_GETPID)))

    out = {}
    calls: dict[str, Callable[[], int]] = {"x32": x32, "i386": i386}
    for abi, call in calls.items():
        pid = os.fork()
        if pid == 0:
            os._exit(0 if call() == os.getpid() else 1)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            out[abi] = f"killed by signal {os.WTERMSIG(status)}"
        else:
            out[abi] = "ran" if os.waitstatus_to_exitcode(status) == 0 else "failed"
    return out


def _reaches(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def _can_write(path: str) -> bool:
    try:
        with open(os.path.join(path, ".attention-course-probe"), "w") as f:
            f.write("x")
        return True
    except OSError:
        return False


def main() -> None:
    requests, replies, _ = boot.start()
    wire.write_frame(replies, {"op": "ready"})
    request, _ = wire.read_frame(requests, wire.Caps(1 << 20, 0, 0))
    course = request["course"]
    tmp = os.statvfs("/tmp")
    found = {
        "uid": os.getuid(),
        "capabilities": _capabilities(),
        "visible": [n for n in request["entries"] if os.path.lexists(os.path.join(course, n))],
        "reaches_host_port": _reaches(int(request["port"])),
        "user_namespace": _can_unshare(CLONE_NEWUSER),
        "mount_namespace": _can_unshare(CLONE_NEWNS),
        "writes_root": _can_write("/"),
        "writes_usr": _can_write("/usr"),
        "tmp_bytes": tmp.f_blocks * tmp.f_frsize,
        "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[1],
        "address_space": resource.getrlimit(resource.RLIMIT_AS)[1],
        "file_size": resource.getrlimit(resource.RLIMIT_FSIZE)[1],
        "groups": os.getgroups(),
        "no_new_privs": _status("NoNewPrivs") == "1",
        "pid": os.getpid(),
        "seccomp": _seccomp_mode(),
        "calls": _try_calls(request.get("calls", [])),
        "other_abis": _other_abis(),
    }
    wire.write_frame(replies, {"op": "probe", "found": found, "seq": request.get("seq")})


if __name__ == "__main__":
    main()
