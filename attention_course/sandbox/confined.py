"""One sandboxed process that answers requests, driven by the grading process under its own clock.

`Confined(script, settings, limits)` starts `inside/<script>` in a fresh sandbox (`jail.py`),
forked from this process's zygote of its kind (`zygotes.py`), with pipes for requests, replies
and stderr. `request` sends a frame and waits for the reply under
limits that only this side keeps: the step's CPU time (the sandbox's own, all its processes:
counted by its cgroup, or from /proc), a wall-clock backstop for code that sleeps, and the
caller's absolute deadline. A busy machine slows a step down but does not stop it. A process
that ignores its alarms, hangs, dies, or writes anything but a well-formed reply within the
caps is killed, and `Died` says why in words a student can read. Nothing the process can write
changes what is asked next or for how long.
"""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import math
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import numpy as np

from attention_course import trace
from attention_course.errors import SandboxUnavailable
from attention_course.sandbox import cgroups, cputime, jail, syscall_filter, zygotes
from attention_course.sandbox.inside import wire
from attention_course.settings import PACING, Limits

Frame = tuple[dict[str, Any], list[np.ndarray]]
Serve = Callable[[dict[str, Any], list[np.ndarray]], Frame]  # a request from inside, answered


STDERR_KEPT = 8192  # bytes of a sandboxed process's stderr kept, its last


class Died(Exception):
    """The sandboxed process is gone (killed here, or it ended); the message is the reason."""


def _ms(seconds: float) -> str:
    """A time in a message, to the millisecond."""
    return f"{round(seconds, 3):g}"


def _stopped(seconds: float) -> str:
    return f"was stopped after {_ms(seconds)} s (an endless loop, or far too slow)"


def _stopped_cpu(seconds: float) -> str:
    return f"was stopped after {_ms(seconds)} s of CPU time (an endless loop, or far too slow)"


def _stopped_waiting(seconds: float) -> str:
    return (
        f"was stopped after {_ms(seconds)} s of waiting (it slept, or waited for what never came)"
    )


class Confined:
    def __init__(
        self,
        script: str,
        settings: dict[str, Any],
        limits: Limits,
        unsandboxed: bool = False,
        hide: Sequence[Path] = (),
        cpu_budget: float | None = None,
        pass_fds: Sequence[int] = (),
        filtered: bool = True,
    ):
        """`cpu_budget`: the CPU seconds the process may use in all, its start included (a
        request that would go past it is stopped there). `pass_fds`: descriptors the process
        inherits, at the same numbers (read-only ones: it runs student code). `filtered=False`:
        no system call filter (for doctor, which tries the layers under it)."""
        self.limits = limits
        self.unsandboxed = unsandboxed
        self._settings = dict(settings, nproc=limits.processes)
        if jail.mpl_cache() is not None:
            self._settings["mpl_cache"] = jail.MPL_CACHE
        self._script = script
        self._hide = list(hide)
        self._caps = wire.Caps(limits.frame_bytes, limits.frame_bytes, limits.result_elements)
        self._proc: subprocess.Popen[bytes] | _Forked | None = None
        self._placeholder: subprocess.Popen[bytes] | None = None  # the sandbox's first process
        self._filtered = filtered
        self._cgroup: cgroups.Cgroup | None = None
        self._scratch: str | None = None
        self._stderr = bytearray()
        self._uid: int | None = None
        self._seqs = itertools.count()  # each request's number, which its reply carries back
        self._seq = -1  # the request being answered (none yet)
        self._cpu_budget = cpu_budget
        self._pass_fds = tuple(pass_fds)
        self.cpu_used = 0.0  # CPU seconds the sandbox had used when last read (and at the end)
        self.peak_memory: int | None = None
        self._reported = False  # its CPU time told to the benchmarks' stages (trace.py)
        self._drainer: threading.Thread | None = None
        self._startup_until = math.inf  # when its start-up time ends (set as it starts)

    # ------------------------------------------------------------------ start and stop

    def start(self, deadline: float) -> None:
        """Start the process and wait for it to say it is ready (Died if it does not), never
        past `deadline` (time.monotonic()). ZygoteLost: the zygote it is forked from ended or
        hung (a fault of grading)."""
        self.launch(require(self.unsandboxed), deadline)

    def launch(self, status: jail.Status, deadline: float) -> None:
        """`start` on a machine whose sandbox is `status` (the probe's own start)."""
        timeout = self.limits.startup_timeout  # wall clock: no student code runs yet
        self._startup_until = time.monotonic() + timeout  # from before the process starts
        until = min(deadline, self._startup_until)
        if self.unsandboxed or not status.ok:
            self._popen()
        else:
            with contextlib.ExitStack() as stack:  # the filter's descriptor, once bwrap has it
                self._fork(status, until, stack, lambda: _stopped(timeout))
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        reply = self._receive(until, lambda: _stopped(timeout))
        if reply[0].get("op") != "ready":
            raise self._dead("did not start properly")

    def _popen(self) -> None:
        """Start the process unsandboxed (limits only)."""
        env = jail.environment()
        self._scratch = tempfile.mkdtemp(prefix="attention-unsandboxed-")
        env.update(HOME=self._scratch, MPLCONFIGDIR=f"{self._scratch}/.matplotlib")
        env["IPYTHONDIR"] = f"{self._scratch}/.ipython"
        argv = jail.python_argv(self._script, self._settings, str(jail.INSIDE_DIR))
        self._proc = subprocess.Popen(
            argv,
            cwd=self._scratch,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=self._pass_fds,  # the sealed inputs'
            preexec_fn=jail.set_rlimits(jail.rlimits(self.limits)),
        )

    def _fork(
        self,
        status: jail.Status,
        until: float,
        stack: contextlib.ExitStack,
        late: Callable[[], str],
    ) -> None:
        """A fresh sandbox around a placeholder (bubblewrap, as `jail.command` makes it), and
        the program forked into it by the zygote, never past `until`. The zygote's imports and
        the sandbox's start run side by side."""
        zygote = zygotes.zygote(zygotes.kind_of(self._script))
        fd = stack.enter_context(syscall_filter.descriptor())
        argv = jail.command(zygotes.PLACEHOLDER, self.limits, status.mode, self._hide, filter_fd=fd)
        self._uid = jail.host_uid(argv)
        if status.cgroup:
            self._cgroup = cgroups.Cgroup.create(
                cgroups.fresh_name(), self.limits.memory_bytes, self.limits.processes
            )
        placeholder = subprocess.Popen(
            argv,
            cwd="/",
            env=jail.environment(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=(fd,),
        )
        self._placeholder = placeholder
        target = _placeholder_ready(placeholder, until)
        if target is None and time.monotonic() >= until:
            raise self._dead(late())
        if target is None:  # bubblewrap ended, or its placeholder said something else
            said = _bubblewrap_said(placeholder)
            self._keep_stderr(said)  # the sandbox's stderr: why it made none
            last = said.decode(errors="replace").strip().splitlines()
            raise self._dead("did not start properly" + (f" ({last[-1]})" if last else ""))
        if self._cgroup is not None:  # the whole sandbox in its cgroup, its placeholder too
            for pid in [placeholder.pid, *cputime.descendants(placeholder.pid)]:
                self._cgroup.add(pid)
        requests, replies, errors = os.pipe(), os.pipe(), os.pipe()
        request = {
            "target": target,
            "uid": jail.SANDBOX_UID,
            "cgroup": [] if self._cgroup is None else self._cgroup.procs_files(),
            "rlimits": jail.rlimits(self.limits),
            "pass_fds": list(self._pass_fds),
            "seccomp": self._filtered,
            "script": self._script,
            "argv": jail.python_argv(self._script, self._settings)[2:],
            "env": jail.environment(),
        }
        theirs = [requests[0], replies[1], errors[1], *self._pass_fds]
        try:
            child = zygote.fork(request, theirs, until)
        except zygotes.ZygoteLost as lost:
            for end in (requests[1], replies[0], errors[0]):
                os.close(end)
            if isinstance(lost, zygotes.ForkLate) and until < self._startup_until:
                raise self._dead(late()) from None  # the submission's time ran out first
            self.close()
            raise
        finally:
            for end in (requests[0], replies[1], errors[1]):
                os.close(end)
        self._proc = _Forked(placeholder, child, requests[1], replies[0], errors[0])

    def _started(self) -> subprocess.Popen[bytes] | _Forked:
        """The process `start` started."""
        if self._proc is None:
            raise RuntimeError("the sandboxed process was not started")
        return self._proc

    def _drain(self) -> None:
        stream = _pipe(self._started().stderr)
        read = stream.read1 if hasattr(stream, "read1") else stream.read
        while True:
            chunk = read(PACING.read_bytes)
            if not chunk:
                return
            self._keep_stderr(chunk)

    def _keep_stderr(self, chunk: bytes) -> None:
        """What the process wrote to stderr, its last STDERR_KEPT bytes (for the messages)."""
        self._stderr += chunk
        del self._stderr[:-STDERR_KEPT]

    def cpu_seconds(self) -> float | None:
        """CPU time the sandbox has used so far: counted by its cgroup, else read from /proc
        (the process and everything it started; None once it is gone)."""
        used = self._cgroup.cpu_seconds() if self._cgroup is not None else None
        if used is None and self._proc is not None and self._proc.poll() is None:
            used = cputime.tree_cpu_seconds(self._proc.pid)
        if used is not None:
            self.cpu_used = max(self.cpu_used, used)
        return used

    def _queued(self) -> tuple[float, bool]:
        """The time the sandbox's processes have spent ready to run but waiting for a core (on
        a busy machine), and whether one of them waits for one now (cputime.queued)."""
        pids = self._cgroup.pids() if self._cgroup is not None else []
        return cputime.queued(pids or self.processes())

    def _counted(self) -> bool:
        """Whether the sandbox's cgroup counts its CPU time (else it is read from /proc)."""
        return self._cgroup is not None and self._cgroup.cpu_seconds() is not None

    @property
    def pid(self) -> int | None:
        """The host pid of the program's first process (None before it is started): in a
        sandbox, the zygote's child that waits for the program (outside its pid namespace)."""
        return self._proc.pid if self._proc is not None else None

    def processes(self) -> list[int]:
        """Every living process of the sandbox but its first (which lays it out, as root): the
        placeholder's, and the program's with what it started."""
        found: list[int] = []
        for root in (self._placeholder, self._proc):
            if root is not None:
                if root is self._proc and _running(root):
                    found.append(root.pid)
                found += cputime.descendants(root.pid)
        return found

    @property
    def host_uid(self) -> int | None:
        """The unprivileged host uid of this sandbox (grading as root), else None."""
        return self._uid

    def stderr_tail(self, lines: int = 15) -> str:
        return "\n".join(self._stderr.decode(errors="replace").splitlines()[-lines:])

    def close(self, grace: float | None = None) -> None:
        """Stop the process and everything it started; nothing of it outlives this call.

        With a `grace`, a process that is done is first asked to end (its request pipe is
        closed) and given that long, so that it ends as a process should (and its CPU time is
        counted where it belongs); then, or at once, it is killed: the sandbox's first process
        (all of its pid namespace dies with it), its cgroup and its host uid."""
        proc = self._proc
        if proc is not None and _running(proc) and grace:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=grace)
            except (OSError, subprocess.TimeoutExpired, zygotes.ZygoteLost):
                pass
        for first in (self._placeholder, proc if isinstance(proc, subprocess.Popen) else None):
            if first is not None and first.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):  # (ended just now)
                    os.killpg(first.pid, signal.SIGKILL)
        if self._placeholder is not None:
            self._placeholder.wait()
        if isinstance(proc, subprocess.Popen):
            proc.wait()
        elif proc is not None:  # its pid namespace is gone with the placeholder: it ends now
            try:
                proc.wait(timeout=PACING.exit_wait)
            except subprocess.TimeoutExpired:  # (a sandbox with no pid namespace of its own)
                if self._uid is not None:
                    _kill_uid(self._uid)
                if self._cgroup is not None:
                    self._cgroup.kill()
                with contextlib.suppress(subprocess.TimeoutExpired, zygotes.ZygoteLost):
                    proc.wait(timeout=PACING.kill_wait)
            except zygotes.ZygoteLost:
                pass  # (its cgroup and its uid are killed below)
        if self._cgroup is not None:
            self.peak_memory = self._cgroup.peak_memory()
            self.cpu_seconds()  # the last of it, into cpu_used
            self._cgroup.remove()
            self._cgroup = None
        if proc is not None and not self._reported:
            self._reported = True
            trace.sandbox_done(self.cpu_used, self.peak_memory)
        if self._uid is not None:
            _kill_uid(self._uid)
        pipes = [] if self._placeholder is None else [self._placeholder.stdin]
        pipes += [self._placeholder.stdout, self._placeholder.stderr] if self._placeholder else []
        if proc is not None:  # once nothing of the sandbox holds them (a read would wait)
            pipes += [proc.stdin, proc.stdout, proc.stderr]
        for stream in pipes:
            if stream is not None:
                with contextlib.suppress(OSError):  # (a pipe's close does not fail: in case)
                    stream.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self) -> Confined:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close(grace=PACING.end_grace if exc_type is None else None)

    # ------------------------------------------------------------------ requests

    def request(
        self,
        header: dict[str, Any],
        arrays: Sequence[np.ndarray] = (),
        *,
        timeout: float,
        deadline: float | None = None,
        serve: Serve | None = None,
    ) -> tuple[dict[str, Any], list[np.ndarray]]:
        """Send one request and return the reply, or raise Died (the process is then gone).

        While the request runs, the process may ask this side to compute a function for it (a
        frame with op "outside" and this request's number): `serve` answers it, and the wait
        for the reply goes on under the same limits. Without `serve`, such a frame is forged.

        The step may use `timeout` seconds of the sandbox's CPU time (plus the grace of its own
        alarm; less if the process's CPU budget runs out first) and `limits.backstop(timeout)`
        seconds of wall-clock time (plus the grace), and never runs past `deadline`
        (time.monotonic()).
        """
        self._seq = next(self._seqs)
        header = dict(header, seq=self._seq)
        limits = self.limits
        now = time.monotonic()
        backstop = limits.backstop(timeout)
        until = now + backstop + limits.grace
        if deadline is not None:
            until = min(until, deadline)
        # The step's CPU time so far: read now from a cgroup; from /proc (a scan of every
        # process, dearer than most steps) only once the reply is not there at the first poll.
        start_cpu = self.cpu_seconds() if self._counted() else None
        known = start_cpu if start_cpu is not None else self.cpu_used
        cpu, shown = timeout + limits.grace, timeout  # its own limit, and the alarm's grace
        if self._cpu_budget is not None:  # never past the process's own budget
            left = max(self._cpu_budget - known, 0.0)
            cpu, shown = min(cpu, left), min(shown, left)

        def late() -> str:  # why a step that reached `until` was stopped
            if until - now >= backstop:
                return _stopped_waiting(backstop)
            return _stopped(max(until - now, 0.0))  # the caller's deadline

        self._send(header, arrays, until, late)
        reply = self._await(until, late, start_cpu, cpu, shown)
        while reply[0].get("op") == "outside" and serve is not None:
            if reply[0].get("seq") != self._seq:
                break
            answer, out = serve(*reply)
            self._send(dict(answer, seq=self._seq), out, until, late)
            reply = self._await(until, late, start_cpu, cpu, shown)
        if reply[0].get("seq") != self._seq or reply[0].get("op") == "outside":  # forged
            raise self._dead("sent back a reply to no request it was given")
        return reply

    def _send(
        self,
        header: dict[str, Any],
        arrays: Sequence[np.ndarray],
        until: float,
        late: Callable[[], str],
    ) -> None:
        """Write a frame to the process (a request, or the answer to its own), never past
        `until`. A frame this side cannot pack (WireError) is grading's own fault: raised."""
        proc = self._started()
        try:
            wire.write_frame(_pipe(proc.stdin).fileno(), header, arrays, deadline=until)
        except wire.Deadline:  # (a TimeoutError, so an OSError: caught before them)
            reason = self._exit_reason() if proc.poll() is not None else late()
            raise self._dead(reason) from None
        except OSError:  # its end of the pipe is closed: it ended (or is ending) there
            raise self._dead(self._exit_reason()) from None

    def _await(
        self,
        until: float,
        late: Callable[[], str],
        start_cpu: float | None,
        cpu: float,
        shown: float,
    ) -> tuple[dict[str, Any], list[np.ndarray]]:
        """The reply, once it starts to arrive (then read until `until`). Meanwhile the step's
        CPU time is read, and the process stopped once it has used `cpu` seconds (or that long
        by the clock, where nothing counts its CPU time), or at `until`; a program that has
        ended with no reply is said as it ended (a process it left may hold its pipes)."""
        proc = self._started()
        fd = _pipe(proc.stdout).fileno()
        started = time.monotonic()
        poll = PACING.cpu_poll_cgroup if self._counted() else PACING.cpu_poll_proc
        look: tuple[float, float, float] | None = None  # the first look (for _asleep)
        while True:
            now = time.monotonic()
            if now >= until:
                raise self._dead(late())
            ended = proc.poll() is not None  # (before the look: a reply it wrote is there)
            ready, _, _ = select.select([fd], [], [], 0 if ended else min(until - now, poll))
            if ready:
                return self._receive(until, late)
            if ended:
                raise self._dead(self._exit_reason())
            used = self.cpu_seconds()
            if used is None:  # nothing counts its CPU time: the clock decides
                if time.monotonic() - started >= cpu:
                    raise self._dead(_stopped(shown))
                continue
            if start_cpu is None:
                start_cpu = used
            if used - start_cpu >= cpu:
                raise self._dead(_stopped_cpu(shown))
            if look is None:  # from the first look on (a step that takes longer than one)
                look = (time.monotonic(), used, self._queued()[0])
            elif time.monotonic() - started >= cpu and self._asleep(look, used):
                # past its limit and asleep (its own alarm should have said so by now)
                raise self._dead(_stopped_waiting(shown))  # the limit: the same every run

    def _asleep(self, look: tuple[float, float, float], used: float) -> bool:
        """Whether the sandbox used less than the idle share of a core since `look` (the clock,
        its CPU time and its time spent waiting for a core, then), and waits for no core now: a
        busy machine's delays are not counted, honest code starved of CPU is not asleep."""
        since, used_then, queued_then = look
        queued, runnable = self._queued()
        awake = time.monotonic() - since - (queued - queued_then)  # the time it could have run
        return not runnable and used - used_then < self.limits.idle_share * awake

    def _receive(
        self, until: float, late: Callable[[], str]
    ) -> tuple[dict[str, Any], list[np.ndarray]]:
        try:
            return wire.read_frame(_pipe(self._started().stdout).fileno(), self._caps, until)
        except wire.Deadline:
            raise self._dead(late()) from None
        except wire.Closed:
            raise self._dead(self._exit_reason()) from None
        except wire.WireError as exc:
            raise self._dead(f"sent back something that could not be read ({exc})") from None

    def _dead(self, reason: str) -> Died:
        """Stop the process; the exception to raise."""
        self.close()
        return Died(reason)

    def _exit_reason(self) -> str:
        """Why the process is gone, from its exit status (the zygote's word, or this process's
        own child's: never the program's)."""
        proc = self._started()
        try:
            code = proc.wait(timeout=PACING.exit_wait)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        except zygotes.ZygoteLost:
            self.close()
            raise
        if self._drainer is not None:  # what it wrote last, for the messages that quote it
            self._drainer.join(timeout=PACING.exit_wait)
        killed = self._cgroup.oom_kills() if self._cgroup is not None else 0
        sig = max(-code, 0)  # (subprocess's -N for a signal N)
        if sig == signal.SIGKILL:
            if killed:
                return "was killed: it used more than the memory limit"
            return "was killed (signal 9: out of memory?)"
        if sig:
            try:
                return f"was killed by signal {signal.Signals(sig).name}"
            except ValueError:
                return f"was killed by signal {sig}"
        return f"ended with exit code {code} (os._exit or a crash?)"


class _Forked:
    """A program the zygote forked into a sandbox, as much of subprocess.Popen as is used here:
    its pipes, its pid, its exit status (the zygote's report)."""

    def __init__(
        self,
        placeholder: subprocess.Popen[bytes],
        child: zygotes.Child,
        stdin: int,
        stdout: int,
        stderr: int,
    ) -> None:
        self.placeholder = placeholder
        self.child = child
        # raw: every read and write goes straight to its pipe
        self.stdin: IO[bytes] | None = io.FileIO(stdin, "w")
        self.stdout: IO[bytes] | None = io.FileIO(stdout, "r")
        self.stderr: IO[bytes] | None = io.FileIO(stderr, "r")

    @property
    def pid(self) -> int:
        assert self.child.pid is not None  # (the zygote says it before the program's end)
        return self.child.pid

    def poll(self) -> int | None:
        return self.child.returncode

    def wait(self, timeout: float | None = None) -> int:
        try:
            return self.child.wait(timeout)
        except TimeoutError:
            raise subprocess.TimeoutExpired("the sandboxed program", timeout or 0.0) from None


def _running(proc: subprocess.Popen[bytes] | _Forked) -> bool:
    return proc.poll() is None


def _placeholder_ready(placeholder: subprocess.Popen[bytes], until: float) -> int | None:
    """The host pid of the sandbox's placeholder once it has said it is ready (its namespaces
    are those the program joins), or None if it ended or `until` passed first."""
    fd = _pipe(placeholder.stdout).fileno()
    got = b""
    while not got.endswith(b"\n"):
        left = until - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, PACING.read_bytes)
        if not chunk:
            return None
        got += chunk
    if got != b"ready\n":
        return None
    found = cputime.descendants(placeholder.pid)  # outermost first: the placeholder is last
    return found.pop() if found else None


def _bubblewrap_said(placeholder: subprocess.Popen[bytes]) -> bytes:
    """What bubblewrap wrote to stderr, once it has ended (it is given the time a process that
    is ending gets: its stdout closed as it exited); nothing if it goes on running."""
    try:
        placeholder.wait(timeout=PACING.exit_wait)
    except subprocess.TimeoutExpired:
        return b""
    return placeholder.stderr.read(PACING.read_bytes) if placeholder.stderr is not None else b""


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    """A pipe of the process: it is started with all three (stdin, stdout, stderr)."""
    if stream is None:
        raise RuntimeError("the sandboxed process has no such pipe")
    return stream


def _kill_uid(uid: int) -> None:
    """Kill every process of a sandbox's own host uid (root mode: nothing else runs as it).
    A zombie (it has ended, and waits for a parent to reap it) runs nothing: it is left to
    its parent, not waited for."""
    for wait in PACING.uid_kills.tries():
        found = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/status") as f:
                    fields = dict(ln.split(":", 1) for ln in f if ln.startswith(("State", "Uid")))
                owner = fields.get("Uid", "").split()[:1]
                ended = fields.get("State", "").split()[:1] in (["Z"], ["X"])
                if owner == [str(uid)] and not ended:
                    found = True
                    os.kill(int(entry.name), signal.SIGKILL)
            except (OSError, ProcessLookupError, ValueError):
                pass
        if not found:
            return
        time.sleep(wait)


# ------------------------------------------------------------------ the machine's sandbox

_probing = threading.Lock()


def probe() -> jail.Status:
    """Whether student code can be sandboxed on this machine, and how (checked once per
    process: a caller waits for a probe already under way, `probe_soon`'s)."""
    with _probing:
        return _probe()


def probe_soon() -> None:
    """Start the probe in the background, for a process that has other work to do before it
    needs the answer (`check`: its imports); `probe` then waits for it."""
    threading.Thread(target=probe, name="attention-course-probe", daemon=True).start()


@functools.cache
def _probe() -> jail.Status:
    if shutil.which("bwrap") is None:
        return jail.Status(
            False, "", "bubblewrap is not installed (apt-get install bubblewrap)", None
        )
    as_root = not os.geteuid()  # (euid 0)
    mode = "root" if as_root else "user"
    if as_root and shutil.which("setpriv") is None:
        return jail.Status(False, "", "setpriv is not installed (apt-get install util-linux)", None)
    unfiltered = syscall_filter.available()
    if unfiltered is not None:
        return jail.Status(
            False, "", f"no system call filter can be built here: {unfiltered}", None
        )
    # A sandbox made as grading makes them, its program forked by the zygote: it runs nothing
    # unless it is unprivileged, without capabilities and under the filter (inside/zygote.py).
    trial = jail.Status(True, mode, "", cgroups.available())
    try:
        with Confined("worker.py", {}, Limits()) as process:
            process.launch(trial, time.monotonic() + PACING.probe_startup)
    except Died as exc:
        return jail.Status(False, "", jail.explain(str(exc), process.stderr_tail(3)), None)
    except (OSError, zygotes.ZygoteLost) as exc:
        return jail.Status(False, "", f"the sandbox did not start ({exc})", None)
    who = "a fresh unprivileged uid per sandbox" if as_root else f"uid {os.getuid()}"
    calls = len(syscall_filter.denied())
    detail = f"bubblewrap {jail.bwrap_version()}, {who}, no network, no capabilities, "
    detail += f"{calls} system calls denied (seccomp)"
    return jail.Status(True, mode, detail, cgroups.available())


def require(unsandboxed: bool = False) -> jail.Status:
    """The probe's status, or SandboxUnavailable with how to fix it (unless the caller asked
    explicitly for unsandboxed grading)."""
    status = probe()
    if not status.ok and not unsandboxed:
        raise SandboxUnavailable(
            f"cannot sandbox student code: {status.detail}; "
            "or grade without a sandbox with --unsandboxed (marked UNSANDBOXED in every result)"
        )
    return status
