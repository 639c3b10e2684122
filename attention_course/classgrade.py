"""Autograding a class, as an instructor runs it every day: only what is new, never twice.

`autograde_class` records the assignment in the gradebook if it is not there yet, looks at
every submission first (saying in words why one cannot be graded), grades only submissions that
are new or changed since they were last graded (or every one with `force`), `jobs` at a time
in long-lived grading jobs, each submission under a deadline, and regenerates the feedback of
what it graded. What each submission's last grading gave is kept in `.grading/<assignment>/`
of the course (its fingerprint: the submitted files and the grading code), written only once
the grade is stored, so a run stopped at any point (Ctrl-C, `kill -9`) is finished by the next
with nothing lost or counted twice. A submission being graded by another run is left to it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from attention_course import jail
from attention_course.assignments import COURSE_ROOT, GRADER_DIR
from attention_course.course import (
    DEFAULT_JOBS,
    CourseError,
    add_students,
    record_ungraded,
    register,
    registered,
    submitted_students,
)
from attention_course.limits import DEFAULT
from attention_course.submissions import Inspection, inspect

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

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes.values())

    @property
    def ok(self) -> bool:
        """Every submission has a score or a recorded reason; no fault of grading."""
        return not self.interrupted and self.count("error") == 0


def grading_code(assignment: str, root: Path) -> str:
    """Changes when anything that decides a grade changes: graders, reference, this package,
    the released and the source notebooks."""
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    parts = sorted(GRADER_DIR.glob("*.py")) + sorted(here.rglob("*.py"))
    parts += sorted((root / "source" / assignment).glob("*.ipynb"))
    parts += sorted((root / "release" / assignment).glob("*.ipynb"))
    parts += [root / "nbgrader_config.py"]
    for path in parts:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


class State:
    """Per submission: the fingerprint and outcome of its last grading, and a lock while a run
    grades it."""

    def __init__(self, root: Path, assignment: str):
        self.folder = root / STATE_DIR / assignment
        self.folder.mkdir(parents=True, exist_ok=True)
        self.locks: dict[str, int] = {}

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
        self.locks[student] = fd
        return True

    def unlock(self, student: str) -> None:
        fd = self.locks.pop(student, None)
        if fd is not None:
            os.close(fd)  # closing releases the lock (so does dying)


class _Job:
    """One grading process (gradejob.py), one submission at a time."""

    def __init__(self, root: Path, unsandboxed: bool, log):
        cmd = [sys.executable, "-m", "attention_course.gradejob", str(root)]
        cmd += ["--unsandboxed"] if unsandboxed else []
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,
        )
        self.buffer = ""
        self.task: str | None = None
        self.deadline = time.monotonic() + DEFAULT.startup_timeout + 60
        self.ready = False

    def fileno(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, assignment: str, student: str, feedback: bool, seconds: float) -> None:
        self.task = student
        self.deadline = time.monotonic() + seconds
        task = {"assignment": assignment, "student": student, "feedback": feedback}
        self.proc.stdin.write(json.dumps(task) + "\n")
        self.proc.stdin.flush()

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


def autograde_class(
    assignment: str,
    root: Path = COURSE_ROOT,
    students: list[str] | None = None,
    jobs: int = DEFAULT_JOBS,
    force: bool = False,
    unsandboxed: bool = False,
    feedback: bool = True,
    progress: Callable | None = None,
    deadline: float = DEFAULT.grading_timeout,
) -> ClassRun:
    """Grade what is new or changed in submitted/*/<assignment>/ (see the module's docstring).

    `progress(kind, student, outcome)` is told of each step: "start" (with the number of
    submissions to grade as `student`), then "done" for every submission. `deadline` is the
    time one submission may take, end to end.
    """
    jail.require(unsandboxed)
    if not registered(assignment, root):
        register(assignment, root)
    names = students if students is not None else submitted_students(assignment, root)
    code = grading_code(assignment, root)
    state = State(root, assignment)
    outcomes: dict[str, Outcome] = {}
    todo: list[tuple[str, str]] = []
    for student in names:
        found = inspect(root, assignment, student, code)
        last = state.last(student)
        if not force and last.get("fingerprint") == _fingerprint(found):
            keep = {k: last.get(k) for k in ("reason", "total")}
            outcomes[student] = Outcome(student, "unchanged", keep["reason"] or "", keep["total"])
        elif found.reason:
            outcome = Outcome(student, "not graded", found.reason)
            if state.lock(student):
                state.record(student, _fingerprint(found), outcome)
                state.unlock(student)
            outcomes[student] = outcome
        else:
            todo.append((student, _fingerprint(found)))
    tell = progress or (lambda *a: None)
    refused = [s for s, o in outcomes.items() if o.status == "not graded"]
    tell("start", len(todo) + len(refused), None)
    for student in refused:
        tell("done", student, outcomes[student])
    run = ClassRun(assignment, outcomes)
    if refused:
        record_ungraded(assignment, refused, root)
    if todo:
        add_students([s for s, _ in todo], root)
        _grade(run, todo, root, state, max(1, jobs), unsandboxed, feedback, tell, deadline)
    run.outcomes = {s: run.outcomes[s] for s in names if s in run.outcomes}
    return run


def _grade(run, todo, root, state, jobs, unsandboxed, feedback, tell, seconds) -> None:
    log_path = state.folder / "jobs.log"
    prints = dict(todo)
    queue = [s for s, _ in todo]
    with open(log_path, "a") as log:
        pool: list[_Job] = [_Job(root, unsandboxed, log) for _ in range(min(jobs, len(queue)))]
        try:
            while queue or any(job.task for job in pool):
                for job in pool:
                    while job.ready and job.task is None and queue:
                        student = queue.pop(0)
                        if state.lock(student):
                            job.send(run.assignment, student, feedback, seconds)
                        else:
                            outcome = Outcome(student, "busy", "being graded by another run")
                            run.outcomes[student] = outcome
                            tell("done", student, outcome)
                now = time.monotonic()
                wait = max(0.0, min(job.deadline for job in pool) - now)
                ready, _, _ = select.select(pool, [], [], min(wait, 1.0))
                for job in list(pool):
                    replies = job.read() if job in ready else []
                    late = time.monotonic() > job.deadline
                    if not job.ready and (replies is None or late):
                        raise CourseError(f"a grading job did not start (see {log_path})")
                    if replies is None or (job.task and late):
                        _job_lost(run, job, state, prints, replies is None, seconds, tell)
                        pool[pool.index(job)] = _Job(root, unsandboxed, log)
                        continue
                    for reply in replies:
                        if reply.get("ready"):
                            job.ready = True
                            continue
                        _finished(run, reply, state, prints, tell)
                        job.task = None
        except BaseException:
            run.interrupted = True
            raise
        finally:
            for job in pool:
                job.kill()
                if job.task:
                    state.unlock(job.task)


def _finished(run, reply, state, prints, tell) -> None:
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


def _job_lost(run, job, state, prints, died, seconds, tell) -> None:
    """A job that died (a fault of grading: tried again next run) or ran past the deadline of
    its submission (recorded: the submission is not graded)."""
    student = job.task
    job.kill()
    job.task = None
    if student is None:
        return
    if died:
        outcome = Outcome(student, "error", "its grading process ended unexpectedly")
    else:
        outcome = Outcome(student, "not graded", f"grading took longer than {seconds:g} s")
        state.record(student, prints[student], outcome)
    state.unlock(student)
    run.outcomes[student] = outcome
    tell("done", student, outcome)
