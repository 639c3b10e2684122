"""A zygote: one pre-imported Python, forked into each fresh sandbox, never running student code.

Started by the grading process (`sandbox/zygote.py`) as a fresh interpreter (`python -I`, the
sandbox's clean environment, nothing of the grading process inherited but its end of one socket),
it imports what every program of its kind imports (numpy; for the notebook run also IPython's
shell and matplotlib), loads the inside scripts, freezes the garbage collector and then only
serves requests over the socket: "fork into this sandbox" (with the program's pipes and sealed
inputs as descriptors). It reaps what it forked and reports each exit status; it never runs
student code itself, and it ends when the grading process closes the socket.

Each fork is a child that, as the zygote's user on the host, clears its supplementary groups,
joins the sandbox's cgroup and sets its limits; then joins the namespaces of the sandbox's
placeholder process (made by bubblewrap as for any sandbox): its pid, network, ipc, uts,
cgroup and mount namespaces, its root, and its own user namespace last (as an ordinary account,
the user namespace that owns the others comes first: its capabilities are those that join
them); becomes the sandbox's user, drops every capability (bounding, permitted, effective,
inheritable, ambient), sets no_new_privs, keeps only its pipes and sealed inputs, loads the
sandbox's seccomp filter and forks again: the process that runs the program is a member of the
sandbox's pid namespace, and checks from /proc/self/status that it holds no capability and is
under the filter before it runs anything else. The first child waits for it and ends the same
way, for the zygote to report.
"""

import ctypes
import gc
import importlib
import json
import linecache
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import types
from typing import Any, NoReturn

# The request's program could not be made contained: a fault of grading, never a student's.
UNCONTAINED = 121
SETUP_FAILED = 122

CLONE = {
    "user": 0x10000000,
    "pid": 0x20000000,
    "net": 0x40000000,
    "ipc": 0x08000000,
    "uts": 0x04000000,
    "cgroup": 0x02000000,
    "mnt": 0x00020000,
}
JOINED = ("pid", "net", "ipc", "uts", "cgroup", "mnt")  # after the owning user namespace
NS_GET_USERNS = 0xB701  # ioctl: the user namespace that owns a namespace

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CAPABILITY_VERSION_3 = 0x20080522
OPEN_MAX = os.sysconf("SC_OPEN_MAX")  # the zygote's limit: every descriptor it has is below
# The most a message of the grading process is read as: its bytes (a request is a few KB) and
# descriptors (a program's three pipes and its sealed inputs).
MESSAGE_BYTES = 65536
MESSAGE_FDS = 64

_libc = ctypes.CDLL(None, use_errno=True)
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.prctl.argtypes += [ctypes.c_ulong]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


class _Program(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _check(result: int, what: str) -> None:
    if result:  # -1, errno says why (0: done)
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _prctl(option: int, arg2: int, arg3: int = 0) -> None:
    """prctl(2), its other arguments 0 (some options refuse anything else)."""
    _check(_libc.prctl(option, arg2, arg3, 0, 0), f"prctl {option}")


# --------------------------------------------------------------------------- the child


def _join(target: int, cgroup_procs: list[str], rlimits: dict[str, int], root: bool) -> None:
    """As the zygote's user on the host: groups, cgroup, limits; then the sandbox of process
    `target` (its placeholder), namespace by namespace, and its root."""
    import fcntl
    import resource

    if root:
        os.setgroups([])
    pid = str(os.getpid()).encode()
    for path in cgroup_procs:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, pid)
        finally:
            os.close(fd)
    for name, value in rlimits.items():
        resource.setrlimit(getattr(resource, name), (value, value))
    # (read-only: O_RDONLY is no bit; Python's os.open adds O_CLOEXEC to every descriptor)
    fds = {n: os.open(f"/proc/{target}/ns/{n}", os.O_RDONLY) for n in CLONE}
    top = os.open(f"/proc/{target}/root", os.O_DIRECTORY)
    owner = fcntl.ioctl(fds["pid"], NS_GET_USERNS)  # (OSError if it fails)
    try:
        # As root, every namespace can be joined from the host's (root has CAP_SYS_ADMIN in
        # every user namespace): its own user namespace last, as nsenter(1) does. As an ordinary
        # account, the capabilities to join them are those of the user namespace that owns them
        # (its creator's, which we are): that one first.
        if not root:
            _check(_libc.setns(owner, CLONE["user"]), "setns user (owner)")
        for name in JOINED:
            _check(_libc.setns(fds[name], CLONE[name]), f"setns {name}")
        os.fchdir(top)
        os.chroot(".")
        if root or os.fstat(fds["user"]).st_ino != os.fstat(owner).st_ino:
            _check(_libc.setns(fds["user"], CLONE["user"]), "setns user")
    finally:
        for fd in (*fds.values(), top, owner):
            os.close(fd)


def _drop_capabilities() -> None:
    """Every capability, explicitly: after setns and setresuid they are all still there (the
    host's root is not mapped in the sandbox's namespace: no uid 0 -> non-0 rule fires)."""
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _prctl(PR_CAPBSET_DROP, cap)
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _place(fds: list[int], targets: list[int]) -> None:
    """The received descriptors at their numbers (0, 1, 2, then the sealed inputs'), and no
    other descriptor open: nothing of the zygote (its socket), nothing of the host."""
    import fcntl

    above = max([*fds, *targets]) + 1  # copies above every target: no dup2 overwrites a source
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, above) for fd in fds]
    for fd, target in zip(moved, targets, strict=True):
        os.dup2(fd, target, inheritable=True)
    _close_all_but(targets)


def _close_all_but(keep: list[int]) -> None:
    start = 0
    for fd in sorted(set(keep)):
        if start < fd:  # (closerange(n, n) would close every descriptor from n on)
            os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, OPEN_MAX)


def _load_filter(program: bytes) -> None:
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _Program(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog))


def _status() -> dict[str, str]:
    with open("/proc/self/status") as f:
        return {k: v.strip() for k, v in (ln.split(":", 1) for ln in f if ":" in ln)}


def _contained(filtered: bool) -> str:
    """What is wrong with this process for student code ("" when nothing), as the kernel says."""
    status = _status()
    wrong = [n for n in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh") if int(status[n], 16)]
    wanted = {"NoNewPrivs": "1", "Seccomp": "2"} if filtered else {"NoNewPrivs": "1"}
    wrong += sorted(name for name, _ in wanted.items() - status.items())  # (2: a filter)
    if "0" in status["Uid"].split() or "0" in status["Gid"].split():
        wrong.append("uid 0")
    return ", ".join(wrong)


def _relay(pid: int) -> NoReturn:
    """The first child: wait for the program's process and end as it ended. (A signal does
    not cut a wait short: Python waits again, PEP 475.)"""
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            os._exit(SETUP_FAILED)
        if os.WIFEXITED(status):
            os._exit(os.WEXITSTATUS(status))
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig not in (signal.SIGKILL, signal.SIGSTOP):  # (theirs cannot be changed)
                signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
            os._exit(SETUP_FAILED)  # (not reached: no signal is blocked, its default ends it)


def _fresh_state(request: dict[str, Any]) -> None:
    """What a freshly started program would have: its argv, environment and path caches, its
    own random state, and matplotlib's folders looked up again (they are in /tmp)."""
    sys.argv = list(request["argv"])
    os.environ.clear()
    os.environ.update(request["env"])
    importlib.invalidate_caches()
    sys.path_importer_cache.clear()
    linecache.clearcache()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()
    mpl = sys.modules.get("matplotlib")
    if mpl is not None:
        for name in ("get_configdir", "get_cachedir"):
            found = getattr(mpl, name)
            setattr(mpl, name, mpl._logged_cached(f"{name}=%s")(found.__wrapped__))
        style = sys.modules.get("matplotlib.style")
        if style is not None:
            style.USER_LIBRARY_PATHS[:] = [os.path.join(mpl.get_configdir(), "stylelib")]


def _become(request: dict[str, Any], fds: list[int], state: dict[str, Any]) -> NoReturn:
    """In the forked child: into the sandbox, then the program's main. Never returns."""
    code = SETUP_FAILED
    try:
        _place(fds, [0, 1, 2, *request["pass_fds"]])  # the zygote's socket closed first
        _join(int(request["target"]), request["cgroup"], request["rlimits"], state["root"])
        uid = int(request["uid"])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != state["zygote"]:
            os._exit(SETUP_FAILED)
        _drop_capabilities()
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        os.chdir("/tmp")
        filtered = bool(request["seccomp"])
        if filtered:
            _load_filter(state["filter"])
        pid = os.fork()
        if pid:  # the first child
            _close_all_but([])  # the program's pipes: its own to close
            _relay(pid)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _prctl(PR_SET_DUMPABLE, 1)  # as after an exec: its own /proc/self is its own
        os.setsid()
        wrong = _contained(filtered)
        if wrong:
            os.write(2, f"not contained, refused to run: {wrong}\n".encode())
            os._exit(UNCONTAINED)
        _fresh_state(request)
        module = state["scripts"][request["script"]]
        sys.modules["__main__"] = module
        code = 1
        module.main()
        sys.stdout.flush()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:
        try:
            os.write(2, f"{type(exc).__name__}: {exc}\n".encode(errors="replace"))
        except OSError:
            pass
    os._exit(code)


# --------------------------------------------------------------------------- the zygote


def _load_scripts(host: str, inside: str, names: list[str]) -> dict[str, types.ModuleType]:
    """The inside scripts, loaded from `host` as they are seen inside the sandbox (`inside`):
    their file names, tracebacks and sys.path are those of a program started there."""
    scripts = {}
    for name in names:
        path = f"{inside}/{name}.py"
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module
        with open(os.path.join(host, f"{name}.py")) as f:
            source = f.read()
        exec(compile(source, path, "exec"), module.__dict__)
        scripts[f"{name}.py"] = module
    return scripts


def _prepare(kind: str, host: str, inside: str, mpl_cache: str) -> dict[str, types.ModuleType]:
    """Import what the programs of `kind` always import, in a private folder of the zygote's
    own (matplotlib's and IPython's folders are looked up again in each child's /tmp)."""
    private = tempfile.mkdtemp(prefix="attention-course-zygote-")
    os.chdir(private)
    saved = dict(os.environ)
    os.environ.update(HOME=private, MPLCONFIGDIR=private, IPYTHONDIR=private)
    try:
        import numpy  # noqa: F401

        names = ["wire", "alarm", "boot", "worker", "probe"]
        if kind == "cells":
            os.environ["MPLBACKEND"] = "Agg"  # as the notebook run's own start sets it
            if mpl_cache and os.path.isdir(mpl_cache):
                for entry in os.listdir(mpl_cache):
                    if entry.endswith(".json"):
                        shutil.copyfile(os.path.join(mpl_cache, entry), f"{private}/{entry}")
            import matplotlib.pyplot  # noqa: F401

            names = ["wire", "alarm", "boot", "cells"]
        scripts = _load_scripts(host, inside, names)
        if kind == "cells":
            scripts["cells.py"].prepare()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        os.chdir("/")
        shutil.rmtree(private, ignore_errors=True)
    return scripts


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


def serve(sock: socket.socket, state: dict[str, Any]) -> None:
    """Fork requests until the grading process closes the socket; report each exit."""
    wake_r, wake_w = os.pipe()  # (neither end inherited, as any descriptor Python makes)
    os.set_blocking(wake_w, False)  # (set_wakeup_fd's end must not block)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, Any] = {}  # pid -> the request's id
    _send(sock, {"op": "ready", "pid": os.getpid()})
    while True:  # (SIGCHLD does not end a select: Python selects again, PEP 475)
        ready, _, _ = select.select([sock.fileno(), wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)  # (select said there is something to read)
            while children:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if not pid:  # none has ended yet
                    break
                if pid in children:
                    _send(sock, {"op": "exit", "id": children.pop(pid), "status": status})
        if sock.fileno() in ready:
            try:
                data, fds, _, _ = socket.recv_fds(sock, MESSAGE_BYTES, MESSAGE_FDS)
            except OSError:
                data, fds = b"", []
            if not data:
                for pid in children:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                return
            try:
                request = json.loads(data)
                pid = os.fork()
            except Exception as exc:  # a request of the grading process that cannot be served
                for fd in fds:
                    os.close(fd)
                _send(sock, {"op": "failed", "id": None, "reason": str(exc)})
                continue
            if not pid:  # the child
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _become(request, fds, state)
            for fd in fds:
                os.close(fd)
            children[pid] = request["id"]
            _send(sock, {"op": "forked", "id": request["id"], "pid": pid})


def main() -> None:
    """Its socket is its stdin; its first message says what to prepare (and holds the system
    call filter): nothing of the host is in its command line, which its children show."""
    sock = socket.socket(fileno=os.dup(0))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    data, [program_fd], _, _ = socket.recv_fds(sock, MESSAGE_BYTES, 1)  # (the filter's)
    config = json.loads(data)
    with os.fdopen(program_fd, "rb") as f:
        program = f.read()
    state: dict[str, Any] = {
        "filter": program,
        "root": not os.geteuid(),  # (euid 0)
        "zygote": os.getpid(),
        "scripts": _prepare(config["kind"], config["host"], config["inside"], config["mpl"]),
    }
    gc.collect()
    gc.freeze()
    try:
        serve(sock, state)
    except (BrokenPipeError, ConnectionError):
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
