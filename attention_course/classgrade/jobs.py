"""The pieces of a class run that local jobs and Dask workers share: each submission's state
and outcome, the long-lived grading job process, and what is recorded when a job answers or
dies."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from attention_course.classgrade import gradebook
from attention_course.grading.submissions import Inspection
from attention_course.settings import DEFAULT

STATE_DIR = ".grading"


@dataclass
class Outcome:
    """What happened to one submission in this run."""

    student: str
    status: str  # graded | not graded | unchanged | busy | error
    reason: str = ""
    total: float | None = None
    seconds: float = 0.0


@dataclass
class ClassRun:
    assignment: str
    outcomes: dict[str, Outcome]
    interrupted: bool = False
    force: bool = False  # grade again even what was graded in this very version

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes.values())

    @property
    def ok(self) -> bool:
        """Every submission has a score or a recorded reason; no fault of grading."""
        return not self.interrupted and self.count("error") == 0


class State:
    """Per submission: the fingerprint and outcome of its last grading, and a lock while a run
    grades it (a file lock, and `shared`, the gradebook's advisory lock, if there is one)."""

    def __init__(
        self, root: Path, assignment: str, shared: gradebook.SubmissionLocks | None = None
    ):
        self.folder = root / STATE_DIR / assignment
        self.folder.mkdir(parents=True, exist_ok=True)
        self.locks: dict[str, int] = {}
        self.shared = shared

    def last(self, student: str) -> dict:
        try:
            return json.loads((self.folder / f"{student}.json").read_text())
        except (OSError, ValueError):
            return {}

    def record(self, student: str, fingerprint: str, outcome: Outcome) -> None:
        path = self.folder / f"{student}.json"
        part = path.with_suffix(".part")
        part.write_text(json.dumps({"fingerprint": fingerprint, **asdict(outcome)}))
        os.replace(part, path)  # whole or not at all, whenever the run is stopped

    def lock(self, student: str) -> bool:
        fd = os.open(self.folder / f"{student}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        if self.shared is not None and not self.shared.acquire(student):
            os.close(fd)
            return False
        self.locks[student] = fd
        return True

    def unlock(self, student: str) -> None:
        fd = self.locks.pop(student, None)
        if fd is not None:
            if self.shared is not None:
                self.shared.release(student)
            os.close(fd)  # closing releases the lock (so does dying)

    def close(self) -> None:
        for student in list(self.locks):
            self.unlock(student)
        if self.shared is not None:
            self.shared.close()


class GradingJob:
    """One grading process (job.py), one submission at a time. `env`: its environment
    (default: this process's)."""

    def __init__(self, root: Path, unsandboxed: bool, log, env: dict | None = None):
        cmd = [sys.executable, "-m", "attention_course.classgrade.job", str(root)]
        cmd += ["--unsandboxed"] if unsandboxed else []
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both are pipes
        self.requests, self.replies = self.proc.stdin, self.proc.stdout
        self.buffer = ""
        self.task: str | None = None
        self.deadline = time.monotonic() + DEFAULT.startup_timeout + 60
        self.ready = False

    def fileno(self) -> int:
        return self.replies.fileno()

    def send(self, assignment: str, student: str, feedback: bool, seconds: float) -> None:
        self.task = student
        self.deadline = time.monotonic() + seconds
        task = {"assignment": assignment, "student": student, "feedback": feedback}
        self.requests.write(json.dumps(task) + "\n")
        self.requests.flush()

    def read(self) -> list[dict] | None:
        """Whole lines available now; None when the job has ended."""
        chunk = os.read(self.fileno(), 65536).decode()
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split("\n")
        return [json.loads(line) for line in lines if line.strip()]

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()


def _fingerprint(found: Inspection) -> str:
    return found.fingerprint or hashlib.sha256(found.reason.encode()).hexdigest()


def claim(run: ClassRun, state: State, student: str, fingerprint: str, tell) -> bool:
    """Lock a submission for this run. False (and its outcome told) when another run grades it
    now, or graded this very version since this run looked."""
    if not state.lock(student):
        outcome = Outcome(student, "busy", "being graded by another run")
    else:
        last = state.last(student)
        if run.force or last.get("fingerprint") != fingerprint:
            return True
        state.unlock(student)
        reason, total = last.get("reason") or "", last.get("total")
        outcome = Outcome(student, "unchanged", reason, total)
    run.outcomes[student] = outcome
    tell("done", student, outcome)
    return False


def finished(run, reply, state, prints, tell) -> None:
    """Record what grading one submission gave (a job's reply), release it and tell."""
    student = reply["student"]
    if reply["graded"]:
        outcome = Outcome(student, "graded", total=reply.get("total"), seconds=reply["seconds"])
        if reply.get("feedback_error"):
            outcome.reason = f"feedback not written: {reply['feedback_error']}"
    elif reply.get("fault"):
        outcome = Outcome(student, "error", reply.get("reason", ""), seconds=reply["seconds"])
    else:
        outcome = Outcome(student, "not graded", reply.get("reason", ""), seconds=reply["seconds"])
    if outcome.status != "error":  # a fault of grading is tried again by the next run
        state.record(student, prints[student], outcome)
    state.unlock(student)
    run.outcomes[student] = outcome
    tell("done", student, outcome)


def lost_reply(student: str, died: bool, seconds: float) -> dict:
    """The reply for a submission whose job died (a fault of grading: tried again next run)
    or ran past its deadline (recorded: the submission is not graded)."""
    if died:
        return {
            "student": student,
            "graded": False,
            "fault": True,
            "seconds": 0.0,
            "reason": "its grading process ended unexpectedly",
        }
    return {
        "student": student,
        "graded": False,
        "fault": False,
        "seconds": seconds,
        "reason": f"grading took longer than {seconds:g} s",
    }


def _job_lost(run, job, state, prints, died, seconds, tell) -> None:
    student = job.task
    job.kill()
    job.task = None
    if student is not None:
        finished(run, lost_reply(student, died, seconds), state, prints, tell)
