"""The sandbox every piece of student code runs in: bubblewrap, an unprivileged user, no privileges.

What a sandboxed process gets, whether grading runs as root or as an ordinary account:
- its own user, pid, ipc, uts, cgroup and network namespaces (no network at all; it talks to
  the grading process over the pipes it inherits), no capabilities, and no way to make another
  user namespace (`--disable-userns`), so it cannot undo any of this;
- a system call filter (seccomp, `syscall_filter.py`) that bubblewrap loads before the first
  program starts: ptrace, mount, namespaces, bpf, keyrings, kernel modules, the clock and the
  rest of what student code never needs fail with EPERM, and other ABIs kill the process;
- a host user id that is not the grader's: as root, a fresh unprivileged uid per sandbox (set
  with `setpriv` between two bubblewrap stages: the first, as root, lays out the file system the
  second may see); as an ordinary account, that account inside a user namespace;
- a file system made only of what Python and numpy need (/usr, the Python installation, a few
  files of /etc), all read-only, a size-capped private /tmp (its working folder and only
  writable place), a fresh /proc and a minimal /dev. The course folder (graders, reference,
  submissions, gradebook, exchange) is never mounted; this package's own folders are hidden
  where they lie inside a mounted one;
- limits: address space, file size, no core files, and a cgroup (memory and process count for
  the whole sandbox) where the machine lets us make one; RLIMIT_NPROC is set by the first code
  that runs inside (`inside/boot.py`), before any student code. Time is bounded by the
  limits the grading process keeps (the sandbox's CPU time, read from its cgroup or from
  /proc, and wall-clock deadlines: confined.py), not by RLIMIT_CPU or a CPU timer, either of
  which would make the process's own CPU clock advance only at scheduler ticks (a notebook
  that times its code must see what a kernel sees).
"""

from __future__ import annotations

import functools
import json
import os
import resource
import shutil
import site
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_course.settings import Limits

INSIDE_DIR = Path(__file__).resolve().with_name("inside")
INSIDE = "/opt/attention-course"  # where INSIDE_DIR appears in the sandbox
MPL_CACHE = "/opt/attention-course-mpl"  # matplotlib's font list, prepared outside
SHM_BYTES = 16 * 1024**2  # /dev/shm (multiprocessing's semaphores), apart from /tmp
SANDBOX_UID = 1000  # the student's uid as seen inside
HOST_UID_BASE = 2_000_000_000  # as root: the host uid of a sandbox is this + a thread id

_SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/fonts",
)
_TOP_LEVEL = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


@dataclass(frozen=True)
class Status:
    """What `probe` found: whether student code can be sandboxed here, and how."""

    ok: bool
    mode: str  # "root" (a fresh unprivileged uid per sandbox), "user", or "" when not ok
    detail: str  # one line: what was probed, or why it failed and how to fix it
    cgroup: str | None  # "cgroup v1"/"cgroup v2" when each sandbox gets its own cgroup


def python_paths() -> list[str]:
    paths = {sys.prefix, sys.base_prefix, str(Path(os.path.realpath(sys.executable)).parents[1])}
    paths.update(p for p in site.getsitepackages() if os.path.isdir(p))
    return sorted(paths)


def _package_dirs() -> list[str]:
    """The engine's folder (it holds no answers; hidden all the same: student code needs none
    of it). The course's folder is hidden by whoever grades (Course.hidden)."""
    return [str(Path(__file__).resolve().parent.parent)]


def _hidden(binds: list[str], extra: list[Path]) -> list[str]:
    """Folders to cover with an empty tmpfs: those that lie inside a bound folder."""
    candidates = [*_package_dirs(), "/usr/local/share/nbgrader", "/usr/local/etc/jupyter"]
    candidates += ["/usr/etc/jupyter", "/usr/share/nbgrader"]
    candidates += [os.path.join(p, "etc", "jupyter") for p in python_paths()]
    candidates += [str(Path(p).resolve()) for p in extra]
    out: list[str] = []
    for path in sorted(set(candidates)):  # sorted: a folder comes before what it holds
        inside = any(path != b and Path(path).is_relative_to(b) for b in binds)
        # a folder inside one already covered is hidden with it (and bubblewrap could not
        # make its mount point in the read-only tmpfs that covers it)
        covered = any(Path(path).is_relative_to(h) for h in out)
        if inside and not covered and os.path.isdir(path):
            out.append(path)
    return out


def _tree(mpl_cache: Path | None, hide: list[Path], inner: bool) -> list[str]:
    """bubblewrap arguments laying out the read-only file system. The first (root) stage binds
    from the host; the `inner` stage binds the same places from what the first stage laid out."""
    args: list[str] = []
    made: set[str] = {"/", "/tmp"}  # /tmp is made before the tree in both stages
    binds: list[str] = []

    def bind(path: str, dest: str | None = None) -> None:
        dest = dest or path
        for parent in reversed(Path(dest).parents):
            if str(parent) not in made:
                made.add(str(parent))
                args.extend(["--perms", "0755", "--dir", str(parent)])
        args.extend(["--ro-bind", dest if inner else path, dest])
        made.add(dest)
        binds.append(dest)

    bind("/usr")
    for top in _TOP_LEVEL:
        if os.path.islink(top):
            args.extend(["--symlink", os.readlink(top), top])
        elif os.path.isdir(top):
            bind(top)
    for path in _SYSTEM_FILES:
        if os.path.exists(path):
            bind(path)
    for path in python_paths():
        if not any(Path(path).is_relative_to(b) for b in binds):
            bind(path)
    bind(str(INSIDE_DIR), INSIDE)
    if mpl_cache is not None:
        bind(str(mpl_cache), MPL_CACHE)
    for path in _hidden(binds, hide):
        args.extend(["--tmpfs", path, "--remount-ro", path])
    return args


def environment() -> dict[str, str]:
    """The whole environment of a sandboxed process (nothing of the grader's own)."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "USER": "student",
        "LOGNAME": "student",
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLCONFIGDIR": "/tmp/.matplotlib",
        "IPYTHONDIR": "/tmp/.ipython",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def command(
    argv: list[str],
    limits: Limits,
    mode: str,
    hide: Sequence[Path] = (),
    *,
    filter_fd: int | None,
) -> list[str]:
    """The full command that runs `argv` (paths as seen inside) in a sandbox. `filter_fd`: the
    system call filter (`syscall_filter.descriptor()`, passed on to the command's process), or
    None for none at all."""
    bwrap = shutil.which("bwrap") or "bwrap"
    cache = mpl_cache()
    as_root = mode == "root"
    seccomp = [] if filter_fd is None else ["--seccomp", str(filter_fd)]
    inner = [
        bwrap,
        *seccomp,
        "--unshare-user",
        "--unshare-all",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        # /tmp first: a Python installation under /tmp is then bound on top of it
        "--size",
        str(limits.tmp_bytes),
        "--perms",
        "0700",
        "--tmpfs",
        "/tmp",
        *_tree(cache, list(hide), inner=as_root),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(SHM_BYTES),
        "--perms",
        "1777",
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
        "--chdir",
        "/tmp",
        "--",
        *argv,
    ]
    if not as_root:
        return inner
    uid = str(HOST_UID_BASE + threading.get_native_id())
    setpriv = shutil.which("setpriv") or "setpriv"
    outer = [bwrap, "--die-with-parent", "--perms", "0755", "--dir", "/tmp"]
    outer += [*_tree(cache, list(hide), inner=False), "--bind", "/proc", "/proc", "--dev", "/dev"]
    outer += ["--", setpriv, "--reuid", uid, "--regid", uid, "--clear-groups"]
    outer += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return outer + inner


def host_uid(cmd: list[str]) -> int | None:
    """The unprivileged host uid a root-mode command runs its sandbox as."""
    if "--reuid" in cmd:
        return int(cmd[cmd.index("--reuid") + 1])
    return None


def rlimits(limits: Limits) -> dict[str, int]:
    """Per-process limits of a sandboxed program (resource's names), set before it starts."""
    return {
        "RLIMIT_AS": limits.memory_bytes,
        "RLIMIT_FSIZE": limits.file_bytes,
        "RLIMIT_CORE": 0,
    }


def set_rlimits(values: dict[str, int]) -> Callable[[], None]:
    """`rlimits`' values set in a process that is about to exec (a preexec_fn)."""

    def apply() -> None:
        for name, value in values.items():
            resource.setrlimit(getattr(resource, name), (value, value))

    return apply


def python_argv(script: str, settings: dict[str, Any], inside: str = INSIDE) -> list[str]:
    """How a script of inside/ is started (in the sandbox, inside/ is at INSIDE)."""
    return [sys.executable, "-I", f"{inside}/{script}", json.dumps(settings)]


@functools.cache
def mpl_cache() -> Path | None:
    """matplotlib's font list, built once per machine and user outside any sandbox, so that
    sandboxes do not scan the fonts every time (they get a read-only copy)."""
    folder = Path.home() / ".cache" / "attention-course" / "matplotlib"
    if not any(folder.glob("fontlist-*.json")):
        folder.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, MPLCONFIGDIR=str(folder), MPLBACKEND="Agg")
        code = "import matplotlib.font_manager"
        result = subprocess.run([sys.executable, "-I", "-c", code], env=env, capture_output=True)
        if result.returncode != 0 or not any(folder.glob("fontlist-*.json")):
            return None
    return folder


def explain(reason: str, stderr: str) -> str:
    """Why bubblewrap made no sandbox, and how to fix it (one line)."""
    text = stderr.strip().splitlines()[-1] if stderr.strip() else reason
    if "namespace" in text.lower() or "permission" in text.lower():
        return (
            f"bubblewrap cannot create a sandbox here ({text}); allow unprivileged user "
            "namespaces (sysctl -w kernel.unprivileged_userns_clone=1, or "
            "kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu)"
        )
    return f"bubblewrap cannot create a sandbox here ({text})"


def bwrap_version() -> str:
    try:
        out = subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "?"
    return out.split()[-1] if out.split() else "?"
