"""Autograding a class, as an instructor runs it every day: only what is new, never twice.

`autograde_class` records the assignment in the gradebook if it is not there yet, looks at
every submission first (saying in words why one cannot be graded), grades only submissions that
are new or changed since they were last graded (or every one with `force`), `jobs` at a time
in long-lived grading jobs, each submission under a deadline, and regenerates the feedback of
what it graded. What each submission's last grading gave is kept in `.grading/<assignment>/`
of the course (its fingerprint: the submitted files and the grading code), written only once
the grade is stored, so a run stopped at any point (Ctrl-C, `kill -9`) is finished by the next
with nothing lost or counted twice. A submission being graded by another run is left to it:
each is claimed with a lock in `.grading/`, and, when the gradebook is PostgreSQL, with an
advisory lock in the database, which runs on other machines see too (`gradebook.py`).

The submissions are graded by grading jobs on this machine, or, with `scheduler`, as one task
per submission on a Dask cluster (`cluster.py`) whose workers run the same grading jobs; both
report through the same outcomes, state and progress.
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

from attention_course.classgrade import gradebook
from attention_course.sandbox import jail
from attention_course.course import COURSE_ROOT, GRADER_DIR
from attention_course.classgrade.nbgrader_api import (
    DEFAULT_JOBS,
    CourseError,
    add_students,
    gradebook_settings,
    record_ungraded,
    register,
    registered,
    submitted_students,
)
from attention_course.settings import DEFAULT
from attention_course.grading.submissions import Inspection, inspect

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


_codes: dict[tuple, str] = {}  # what the files were (path, size, mtime) -> their digest


def grading_code(assignment: str, root: Path) -> str:
    """Changes when anything that decides a grade changes: graders, reference, this package,
    the released and the source notebooks. (Hashed again only when one of the files changed:
    a Dask worker asks for every submission it grades.)"""
    here = Path(__file__).resolve().parent
    parts = sorted(GRADER_DIR.glob("*.py")) + sorted(here.rglob("*.py"))
    parts += sorted((root / "source" / assignment).glob("*.ipynb"))
    parts += sorted((root / "release" / assignment).glob("*.ipynb"))
    parts += [root / "nbgrader_config.py"]
    seen = tuple((str(p), st.st_size, st.st_mtime_ns) for p in parts for st in [p.stat()])
    if seen not in _codes:
        digest = hashlib.sha256()
        for path in parts:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        _codes.clear()
        _codes[seen] = digest.hexdigest()
    return _codes[seen]


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
    """One grading process (gradejob.py), one submission at a time. `env`: its environment
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
    scheduler=None,
) -> ClassRun:
    """Grade what is new or changed in submitted/*/<assignment>/ (see the module's docstring).

    `progress(kind, student, outcome)` is told of each step: "start" (with the number of
    submissions to grade as `student`), then "done" for every submission. `deadline` is the
    time one submission may take, end to end. `scheduler`: grade on a Dask cluster instead of
    `jobs` local grading jobs: a scheduler's address (tcp://HOST:8786), "local" (a Dask
    LocalCluster of `jobs` worker processes on this machine) or a `distributed.Client`.
    """
    remote = scheduler is not None and scheduler != "local"
    if not remote:  # a remote cluster's workers check their own sandbox
        jail.require(unsandboxed)
    db_url, course_id = gradebook_settings(root)
    names = students if students is not None else submitted_students(assignment, root)
    shared = (
        gradebook.SubmissionLocks(db_url, course_id, assignment)
        if gradebook.is_postgres(db_url)
        else None
    )
    state = State(root, assignment, shared)
    tell = progress or (lambda *a: None)
    close = None
    try:
        run, todo = _look(assignment, root, names, state, force)
        if scheduler is not None and todo:  # an unreachable cluster is said before anything
            from attention_course.classgrade.cluster import connect

            scheduler, close = connect(scheduler, jobs)
        with gradebook.exclusive(db_url, course_id, root):  # one run sets the gradebook up
            if not registered(assignment, root):
                register(assignment, root)
        refused = [s for s, o in run.outcomes.items() if o.status == "not graded"]
        tell("start", len(todo) + len(refused), None)
        for student in refused:
            tell("done", student, run.outcomes[student])
        if refused:
            gradebook.retry_races(record_ungraded, assignment, refused, root)
        if todo:
            gradebook.retry_races(add_students, [s for s, _ in todo], root)
        if todo and scheduler is not None:
            from attention_course.classgrade.cluster import grade_on_cluster

            grade_on_cluster(
                run, todo, root, state, scheduler, unsandboxed, feedback, tell, deadline
            )
        elif todo:
            _grade(run, todo, root, state, max(1, jobs), unsandboxed, feedback, tell, deadline)
    finally:
        if close is not None:
            close()
        state.close()
    run.outcomes = {s: run.outcomes[s] for s in names if s in run.outcomes}
    return run


def _look(assignment, root, names, state, force) -> tuple[ClassRun, list[tuple[str, str]]]:
    """Inspect every submission: the run with what needs no grading (unchanged, cannot be
    graded), and the (student, fingerprint) of each to grade."""
    code = grading_code(assignment, root)
    run = ClassRun(assignment, {}, force=force)
    todo: list[tuple[str, str]] = []
    for student in names:
        found = inspect(root, assignment, student, code)
        last = state.last(student)
        if not force and last.get("fingerprint") == _fingerprint(found):
            keep = {k: last.get(k) for k in ("reason", "total")}
            run.outcomes[student] = Outcome(
                student, "unchanged", keep["reason"] or "", keep["total"]
            )
        elif found.reason:
            outcome = Outcome(student, "not graded", found.reason)
            if state.lock(student):
                state.record(student, _fingerprint(found), outcome)
                state.unlock(student)
            run.outcomes[student] = outcome
        else:
            todo.append((student, _fingerprint(found)))
    return run, todo


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


def _grade(run, todo, root, state, jobs, unsandboxed, feedback, tell, seconds) -> None:
    log_path = state.folder / "jobs.log"
    prints = dict(todo)
    queue = [s for s, _ in todo]
    with open(log_path, "a") as log:
        pool: list[GradingJob] = [
            GradingJob(root, unsandboxed, log) for _ in range(min(jobs, len(queue)))
        ]
        try:
            while queue or any(job.task for job in pool):
                for job in pool:
                    while job.ready and job.task is None and queue:
                        student = queue.pop(0)
                        if claim(run, state, student, prints[student], tell):
                            job.send(run.assignment, student, feedback, seconds)
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
                        pool[pool.index(job)] = GradingJob(root, unsandboxed, log)
                        continue
                    for reply in replies:
                        if reply.get("ready"):
                            job.ready = True
                            continue
                        finished(run, reply, state, prints, tell)
                        job.task = None
        except BaseException:
            run.interrupted = True
            raise
        finally:
            for job in pool:
                job.kill()
                if job.task:
                    state.unlock(job.task)


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
