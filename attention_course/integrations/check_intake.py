"""Reading the notebooks students send to the check service, off its event loop.

A notebook is read (its JSON, then which assignment its cells are, which may parse every code
cell) by a worker process of a small pool, never by the service: each worker has an address
space limit (RLIMIT_AS, `HubCheck.intake_memory`) and each reading a time limit
(`HubCheck.intake_seconds`, by the clock: the worker is killed and replaced past it). A
notebook that reaches the time limit, or whose reading took the worker past half its memory
limit (its peak resident size; the parser's own MemoryError included), is an abusive request
(a parse bomb: one cell `x=[a,a,...]` of a megabyte takes a gigabyte to parse): its student is
charged a check (hub_check.CheckService), the worker is replaced, and nobody else waits for it
longer than the time limit.

The worker's protocol: the course and the memory mark first, then one JSON line per notebook
in ({"path", "assignment"}), one JSON line out ({"assignment"}, {"error"} or {"abusive"}); a
worker that answers {"abusive"} ends.
"""

from __future__ import annotations

import json
import os
import queue
import resource
import select
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from attention_course.settings import HubCheck

PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies


@dataclass(frozen=True)
class Read:
    """What reading a notebook found: its assignment, or why it was refused; `abusive` when
    reading it reached the time or memory limit (the refusal then counts)."""

    assignment: str | None
    error: str | None = None
    abusive: bool = False


class _Worker:
    def __init__(self, course_root: Path, memory: int):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-m", "attention_course.integrations.check_intake"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd="/",
        )
        # Before the first notebook it is given: its memory limit, soft and hard (this side
        # may set it: the same account), and the course it reads for.
        resource.prlimit(self.proc.pid, resource.RLIMIT_AS, (memory, memory))
        self._send({"course": str(course_root), "mark": memory // 2})

    def _send(self, message: dict[str, object]) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def ask(self, path: Path, assignment: str | None, seconds: float) -> dict[str, object] | str:
        """The worker's answer, or "time" / "memory" (it was killed, or ended, without one)."""
        try:
            self._send({"path": str(path), "assignment": assignment})
        except OSError:
            return "memory"
        stdout = self.proc.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], seconds)
        if not ready:
            self.kill()
            return "time"
        line = stdout.readline()
        if not line:
            self.kill()
            return "memory"
        try:
            answer = json.loads(line)
        except ValueError:
            self.kill()
            return "memory"
        return answer if isinstance(answer, dict) else "memory"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


class Intake:
    """At most `settings.intake_workers` notebooks read at once, each by a worker process
    (started when first needed, replaced when killed) within the intake's time and memory
    limits. Thread-safe: `read` blocks until a worker is free."""

    def __init__(self, course_root: Path, settings: HubCheck):
        self.course_root = course_root
        self.settings = settings
        self._free: queue.Queue[_Worker | None] = queue.Queue()
        for _ in range(settings.intake_workers):
            self._free.put(None)  # a place for a worker, started on first use
        self._closed = threading.Event()
        self.reading: set[int] = set()  # the process ids of the workers reading now

    def read(self, path: Path, assignment: str | None) -> Read:
        worker = self._free.get()
        try:
            if worker is None or not worker.alive():
                worker = _Worker(self.course_root, self.settings.intake_memory)
            self.reading.add(worker.proc.pid)
            try:
                answer = worker.ask(path, assignment, self.settings.intake_seconds)
            finally:
                self.reading.discard(worker.proc.pid)
        except BaseException:
            if worker is not None:
                worker.kill()
            self._free.put(None)
            raise
        if isinstance(answer, str) or "abusive" in answer:
            worker.kill()
            self._free.put(None)
            return self._abusive(answer if isinstance(answer, str) else "memory")
        self._free.put(worker if worker.alive() and not self._closed.is_set() else None)
        found, error = answer.get("assignment"), answer.get("error")
        if isinstance(found, str):
            return Read(found)
        return Read(None, str(error or "the notebook could not be read")[:500])

    def _abusive(self, why: str) -> Read:
        if why == "time":
            limit = f"{self.settings.intake_seconds:g} seconds"
            return Read(None, f"the notebook took more than {limit} to read: refused", True)
        limit = f"{self.settings.intake_memory // 2**21} MiB"
        return Read(None, f"the notebook needed more than {limit} of memory to read: refused", True)

    def close(self) -> None:
        self._closed.set()
        while True:
            try:
                worker = self._free.get_nowait()
            except queue.Empty:
                return
            if worker is not None:
                worker.kill()


def _answer(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _peak_bytes() -> int:
    """This process's peak resident memory since its program started: VmHWM, of its own memory
    map. (ru_maxrss also counts what the process that started it had when it forked: a
    service grown past the mark would make every reading look abusive.)"""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> None:
    """The worker: the course, then one notebook per line until its input ends."""
    import ctypes

    from attention_course.course import Course
    from attention_course.grading.notebook import NotebookError, detect_assignment, read_notebook

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    first = sys.stdin.readline()
    if not first:
        return
    given = json.loads(first)
    course, mark = Course.load(given["course"]), int(given["mark"])
    for line in sys.stdin:
        request = json.loads(line)
        path, named = Path(request["path"]), request.get("assignment")
        answer: dict[str, object]
        try:
            nb = read_notebook(path)
            answer = {"assignment": named or detect_assignment(nb, path, course)}
            del nb
        except NotebookError as exc:
            answer = {"error": str(exc).replace(str(path), "the notebook")}
        except (MemoryError, RecursionError):
            os._exit(3)  # over its memory: this side says so
        if _peak_bytes() > mark:
            _answer({"abusive": "memory"})  # (and this worker ends: its peak stays)
            return
        _answer(answer)


if __name__ == "__main__":
    main()
