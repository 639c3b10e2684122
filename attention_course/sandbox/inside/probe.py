"""What a sandboxed process can do, tried from the inside (for `attention-course doctor`).

Runs as a script inside the sandbox, answers one request with what it found: its uid and
capabilities, whether it can see the course folder, reach a port the grading process listens
on, make a user namespace, write outside /tmp, and how large /tmp is.
"""

import ctypes
import os
import resource
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import boot  # noqa: E402
import wire  # noqa: E402

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000


def _capabilities() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return -1


def _can_unshare(flags: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    if os.fork() == 0:  # try in a child, so this process stays as it is
        os._exit(0 if libc.unshare(flags) == 0 else 1)
    _, status = os.wait()
    return os.waitstatus_to_exitcode(status) == 0


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
        "pid": os.getpid(),
    }
    wire.write_frame(replies, {"op": "probe", "found": found, "seq": request.get("seq")})


if __name__ == "__main__":
    main()
