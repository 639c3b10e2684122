"""Start a notebook kernel under limits, and in a bubblewrap sandbox where it is installed.

`python -m attention_course.kernel_sandbox -- KERNEL COMMAND...` is what `SafeExecute` runs
instead of the plain kernel command during `nbgrader autograde`. The kernel gets a memory,
file-size and core-dump limit; with bubblewrap, it sees the whole file system read-only, an
empty /tmp, and of the course folder only its own working folder (autograded/<student>/
<assignment>/), so a student's notebook cannot read the graders or other submissions nor write
to the gradebook. The network namespace is shared: the kernel talks to nbgrader over loopback.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from pathlib import Path

from attention_course.assignments import COURSE_ROOT, graded_course
from attention_course.sandbox import bwrap_path, hide_args

MEMORY_BYTES = 4 * 1024**3
FILE_BYTES = 256 * 1024**2


def sandbox_command(cmd: list[str], cwd: Path, root: Path = COURSE_ROOT) -> list[str]:
    bwrap = bwrap_path()
    if bwrap is None or os.environ.get("ATTENTION_COURSE_SANDBOX") == "none":
        return cmd
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    cwd = cwd.resolve()
    args += hide_args([root, *graded_course(cwd)])
    if "-f" in cmd:  # the connection file
        conn = str(Path(cmd[cmd.index("-f") + 1]).resolve())
        args += ["--ro-bind", conn, conn]
    args += ["--bind", str(cwd), str(cwd), "--chdir", str(cwd), "--die-with-parent"]
    for name, value in (
        ("HOME", "/tmp"),
        ("IPYTHONDIR", "/tmp/.ipython"),
        ("MPLCONFIGDIR", "/tmp/.matplotlib"),
        ("MPLBACKEND", "Agg"),
    ):
        args += ["--setenv", name, value]
    return args + ["--", *cmd]


def main(argv: list[str]) -> None:
    cmd = argv[argv.index("--") + 1 :] if "--" in argv else argv
    if not cmd:
        sys.exit("usage: python -m attention_course.kernel_sandbox -- KERNEL COMMAND...")
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    full = sandbox_command(cmd, Path.cwd())
    if full[0] != cmd[0]:
        # Interrupting a kernel sends SIGINT to its process group: bubblewrap itself must ignore
        # it (or it dies and takes the kernel along); ipykernel sets its own handler.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.execvp(full[0], full)


if __name__ == "__main__":
    main(sys.argv[1:])
