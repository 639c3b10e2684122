"""The pieces of a class run that local jobs and Dask workers share: each submission's state
and outcome, the long-lived grading job process, and what is recorded when a job answers or
dies."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, BinaryIO

from attention_course.classgrade import gradebook, outcomes
from attention_course.grading.submissions import Inspection
from attention_course.settings import PACING, RETRIES, Retries

STATE_DIR = ".grading"


@dataclass
class Outcome:
    """What happened to one submission in this run."""

    student: str
    status: str  # graded | not graded | unchanged | busy | error (| retry, wait: told only)
    reason: str = ""
    total: float | None = None
    seconds: float = 0.0
    replaced: float | None = None  # not graded: the total of an earlier version, now 0
    late_penalty: float = 0.0  # graded: nbgrader's late penalty, to be taken off `total`

    @classmethod
    def unchanged(cls, student: str, last: dict) -> Outcome:
        """A submission graded in this very version before: what that grading recorded."""
        return cls(student, "unchanged", last.get("reason") or "", last.get("total"))


@dataclass
class ClassRun:
    assignment: str
    outcomes: dict[str, Outcome]
    force: bool = False  # grade again even what was graded in this very version
    # A fault of the infrastructure that outlived its retries (the gradebook, the disk): the
    # run sends no more submissions (each left is a fault of grading, for the next run).
    down: str = ""

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes.values())

    @property
    def ok(self) -> bool:
        """Every submission has a score or a recorded reason; no fault of grading."""
        return not self.count("error")


class State:
    """Per submission: the fingerprint and outcome of its last grading, and a lock while a run
    grades it (a file lock, and `shared`, the gradebook's advisory lock, if there is one).
    With `records`, the outcome is kept in the gradebook itself, which every course folder
    grading into it sees, and which decides: a submission is unchanged only when the gradebook
    holds its outcome for the same fingerprint (a restored or new gradebook is graded again).
    Its copy in .grading/ of the course folder is a cache the gradebook overrules. While a
    submission is graded, and when its grading fails, its record says so: the scores the
    gradebook holds for it are then not reliable (outcomes.UNRELIABLE)."""

    def __init__(
        self,
        root: Path,
        assignment: str,
        shared: gradebook.SubmissionLocks | None = None,
        records: gradebook.Records | None = None,
        retries: Retries = RETRIES,
    ):
        self.retries = retries
        self.root, self.assignment = root, assignment
        self.folder = root / STATE_DIR / assignment
        self.folder.mkdir(parents=True, exist_ok=True)
        self.locks: dict[str, BinaryIO] = {}
        self.shared = shared
        self.records = records

    def last(self, student: str) -> dict:
        """The outcome this course folder recorded last ({} if none)."""
        try:
            return json.loads((self.folder / f"{student}.json").read_text())
        except (OSError, ValueError):
            return {}

    def cached(self, student: str, fingerprint: str) -> bool:
        """Whether this course folder's cache says this very version was graded (whatever the
        gradebook holds now)."""
        last = self.last(student)
        return last.get("fingerprint") == fingerprint and last.get("status") in outcomes.FINAL

    def known(self, student: str, fingerprint: str, look: dict | None = None) -> dict | None:
        """The final outcome the gradebook holds for this very version of the submission,
        whichever course folder graded it (None: it is to grade): its record of the same
        fingerprint, with the submission in nbgrader's tables. `look`: the gradebook's records
        read with `held` (Records.all). Without records (a state of this folder alone), the
        cache decides."""
        if self.records is None:
            return self.last(student) if self.cached(student, fingerprint) else None
        if look is None:
            look = outcomes.retrying(self.records.all, [student], held=True, retries=self.retries)
        there = dict(look.get(student, {}))
        held = there.pop("held", False)
        if there.get("fingerprint") != fingerprint or there.get("status") not in outcomes.FINAL:
            return None
        if not held:  # a record without its submission: nbgrader's row is missing
            return None
        if self.last(student) != there:
            self._write(student, there)  # graded in another course folder: known here too
        return there

    def _write(self, student: str, record: dict) -> None:
        """The cache's copy (a cache: a disk that refuses it loses nothing)."""
        path = self.folder / f"{student}.json"
        part = path.with_suffix(".part")
        with contextlib.suppress(OSError):
            part.write_text(json.dumps(record))
            os.replace(part, path)  # whole or not at all, whenever the run is stopped

    def record(self, student: str, fingerprint: str, outcome: Outcome) -> None:
        """Keep an outcome of the student's (the gradebook first: it is the one truth)."""
        kept = asdict(outcome)
        if self.records is not None:
            outcomes.retrying(self.records.put, student, fingerprint, kept, retries=self.retries)
        self._write(student, {"fingerprint": fingerprint, **kept})

    def take_back(self, student: str) -> float | None:
        """A submission graded "not graded" has no score: every grade an earlier version earned
        taken back from the gradebook (nbgrader_api.record_ungraded: nbgrader leaves them when
        it fails); the total it had, if it had one. Nothing without records (a state of this
        folder alone)."""
        if self.records is None:
            return None
        from attention_course.classgrade.nbgrader_api import record_ungraded

        db_url = self.records.db_url
        return record_ungraded(self.assignment, [student], self.root, db_url).get(student)

    def begin(self, student: str, fingerprint: str) -> None:
        """Mark the submission as being graded, in the gradebook: the scores it holds for it are
        not reliable until its outcome is recorded (a run stopped now leaves the mark, and the
        next run grades it)."""
        if self.records is not None:
            mark = Outcome(student, outcomes.GRADING_NOW, "its grading did not finish")
            outcomes.retrying(
                self.records.put, student, fingerprint, asdict(mark), retries=self.retries
            )

    def fail(self, student: str, fingerprint: str, outcome: Outcome) -> None:
        """Mark a fault of grading in the gradebook, with its reason: the scores it holds for
        the submission are not reliable (never final, never in the cache: the next run grades
        it). Tried once: the gradebook may be what failed, and then its mark stays."""
        if self.records is None:
            return
        try:
            self.records.put(student, fingerprint, asdict(outcome))
        except Exception as exc:  # noqa: BLE001 (classified: a gradebook that failed)
            if outcomes.of_exception(exc) not in outcomes.RETRIED:
                raise

    def lock(self, student: str) -> bool:
        """Claim the submission for this run: this course folder's file lock, then the
        gradebook's (False: another run holds it)."""
        held = open(self.folder / f"{student}.lock", "ab")  # made if missing, never written
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held.close()
            return False
        try:
            got = self.shared is None or self.shared.acquire(student)
        except BaseException:
            held.close()
            raise
        if not got:
            held.close()
            return False
        self.locks[student] = held
        return True

    def unlock(self, student: str) -> None:
        held = self.locks.pop(student, None)
        if held is not None:
            if self.shared is not None:
                self.shared.release(student)
            held.close()  # closing releases the lock (so does dying)

    def close(self, keep: bool = False) -> None:
        """Let go of every claim; `keep`: the gradebook's connections (the records' pool, the
        locks' session, every claim of this state's let go) are kept for later use."""
        for student in list(self.locks):
            self.unlock(student)
        if not keep:
            if self.shared is not None:
                self.shared.close()
            if self.records is not None:
                self.records.close()


class GradingJob:
    """One grading process (job.py), one submission at a time: started anew (`start`) or
    forked from this process (`fork`)."""

    def __init__(self, proc: subprocess.Popen | Forked, requests: IO[str], replies: IO[str]):
        self.proc, self.requests, self.replies = proc, requests, replies
        self.buffer = ""
        self.task: str | None = None
        self.ready = False
        self.sent = self.seconds = self.waited = 0.0
        self.stall = PACING.stall
        self.waiting: tuple[str, float] | None = None  # a wait it told of: (on what, since)
        self.noted: tuple[str, float] | None = None  # the last wait said in the progress
        self.time_start_from_now()

    @classmethod
    def start(cls, root: Path, unsandboxed: bool, log, env: dict | None = None) -> GradingJob:
        """A job started anew (`python -m attention_course.classgrade.job`); `env`: its
        environment (default: this process's)."""
        cmd = [sys.executable, "-m", "attention_course.classgrade.job", str(root)]
        cmd += ["--unsandboxed"] if unsandboxed else []
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,
            env=env,
        )
        assert proc.stdin is not None  # both are pipes
        assert proc.stdout is not None
        return cls(proc, proc.stdin, proc.stdout)

    @classmethod
    def fork(cls, root: Path, unsandboxed: bool, log) -> GradingJob:
        """A job forked from this process once it has imported all a job needs (the second of
        CPU a job started anew pays for its imports, paid once for every job): only for a
        process that has opened nothing a job must not share and runs no other thread (a
        fork copies other threads' locks as they are)."""
        proc = Forked(root, unsandboxed, log)
        return cls(proc, proc.requests, proc.replies)

    def time_start_from_now(self) -> None:
        """Its start-up may take PACING.job_start from now (a minute past a sandbox's start-up
        timeout; again from the moment a run that started it ahead of need sends it work)."""
        self.deadline = time.monotonic() + PACING.job_start

    def fileno(self) -> int:
        return self.replies.fileno()

    def send(
        self,
        assignment: str,
        student: str,
        feedback: bool,
        seconds: float,
        stall: float = PACING.stall,
    ) -> None:
        """Send it a submission to grade in `seconds` of its working time; a wait on the
        infrastructure longer than `stall` is a stall (waits.py)."""
        self.task, self.seconds, self.stall = student, seconds, stall
        self.sent, self.waited, self.waiting = time.monotonic(), 0.0, None
        task = {"assignment": assignment, "student": student, "feedback": feedback}
        self.requests.write(json.dumps({**task, "stall": stall}) + "\n")
        self.requests.flush()

    def heard(self, line: dict) -> bool:
        """Take in a line of the job's that tells how its submission waits on the
        infrastructure (True; job.py), or say it is not one (False)."""
        if "waiting" not in line:
            return False
        if line.get("student") == self.task:
            self.waited = float(line.get("waited") or 0.0)
            what, since = line.get("waiting"), line.get("since")
            self.waiting = (str(what), float(since)) if what and since is not None else None
        return True

    def over(self, now: float | None = None) -> tuple[str, str] | None:
        """Whether the submission it grades is past its time, and whose that is: None (it is
        not), or (side, reason): the student's when its grading worked longer than the
        submission's seconds (its waits on the gradebook and the disk not counted, and a wait
        it has not told of yet given PACING.wait_untold), the infrastructure's when a wait it
        told of went on past the stall limit (and PACING.stall_grace, for the job to break it
        and answer itself)."""
        if self.task is None:
            return None
        now = time.monotonic() if now is None else now
        current = now - self.waiting[1] if self.waiting else 0.0
        if self.waiting and current > self.stall + PACING.stall_grace:
            reason = f"{self.waiting[0]} did not answer for {current:.0f} s (a stall)"
            return outcomes.TRANSIENT, reason
        if now - self.sent - self.waited - current > self.seconds + PACING.wait_untold:
            return outcomes.STUDENT, f"grading took longer than {self.seconds:g} s"
        return None

    def wait_to_note(self) -> str | None:
        """The words for a wait of its submission's on the infrastructure, once, when it has
        lasted PACING.wait_noted (None: none to say now)."""
        if self.task is None or self.waiting is None or self.noted == self.waiting:
            return None
        what, since = self.waiting
        lasted = time.monotonic() - since
        if lasted < PACING.wait_noted:
            return None
        self.noted = self.waiting
        return (
            f"waiting on {what} for {lasted:.0f} s (not counted in its time; a stall after "
            f"{self.stall:g} s)"
        )

    def read(self) -> list[dict] | None:
        """Whole lines available now; None when the job has ended."""
        chunk = os.read(self.fileno(), PACING.read_bytes).decode()
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split("\n")
        return [json.loads(line) for line in lines if line.strip()]

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # (ended just now)
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


class Forked:
    """A grading job forked from this process: in a session of its own, killed with this
    process, its requests on stdin, its replies on stdout and what it prints in `log`, no
    other file of this process open."""

    def __init__(self, root: Path, unsandboxed: bool, log) -> None:
        from attention_course.classgrade import job

        job.preload()  # once, here, for every job forked from this process
        requests, to_requests = os.pipe()
        from_replies, replies = os.pipe()
        parent = os.getpid()
        self.pid = os.fork()
        if not self.pid:  # the job: it never returns into this process's code
            status = os.EX_SOFTWARE
            try:
                os.setsid()
                job.die_with_parent(parent)
                job.name_this_process(b"grading job")
                os.dup2(requests, 0)
                os.dup2(replies, 1)
                os.dup2(log.fileno(), 2)
                os.closerange(3, os.sysconf("SC_OPEN_MAX"))
                job.serve(root, unsandboxed)
                status = os.EX_OK
            except BaseException:  # noqa: BLE001 (in its log; the run sees the job end)
                traceback.print_exc()
            finally:
                os._exit(status)
        os.close(requests)
        os.close(replies)
        self.requests = os.fdopen(to_requests, "w", encoding="utf-8")
        self.replies = os.fdopen(from_replies, encoding="utf-8")
        self.returncode: int | None = None

    def wait(self) -> int:
        """Its exit status, once it has ended (waited for once, then remembered)."""
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode


def _fingerprint(found: Inspection) -> str:
    return found.fingerprint or hashlib.sha256(found.reason.encode()).hexdigest()


class Retrying:
    """Submissions whose grading met a transient fault (outcomes.TRANSIENT), each waiting to
    be graded again in this run, still claimed; after `retries.attempts` tries, a fault of
    grading."""

    def __init__(self, retries: Retries = RETRIES):
        self.retries = retries
        self.tries: dict[str, int] = {}
        self.due: dict[str, float] = {}  # student -> when to grade it again (time.monotonic)

    def later(self, student: str) -> float | None:
        """Seconds until the submission is graded again; None when it has had every try."""
        tries = self.tries.get(student, 0) + 1
        if tries > self.retries.attempts:
            return None
        self.tries[student] = tries
        delay = self.retries.delay(tries)
        self.due[student] = time.monotonic() + delay
        return delay

    def next(self) -> str | None:
        """A submission due to be graded again now (taken off the list), or None."""
        now = time.monotonic()
        for student, when in sorted(self.due.items(), key=lambda item: item[1]):
            if when <= now:
                del self.due[student]
                return student
        return None

    def wait(self) -> float | None:
        """Seconds until the next one is due (None: none waits)."""
        return max(0.0, min(self.due.values()) - time.monotonic()) if self.due else None


def claim(run: ClassRun, state: State, student: str, fingerprint: str, tell) -> bool:
    """Lock a submission for this run and mark it in the gradebook as being graded. False
    (and its outcome told) when another run grades it now, or graded this very version since
    this run looked (in this or another course folder), or the gradebook cannot be reached (a
    fault of grading: the next run grades it)."""
    try:
        if not state.lock(student):
            outcome = Outcome(student, "busy", "being graded by another run")
        else:
            last = None if run.force else state.known(student, fingerprint)
            if last is None:
                state.begin(student, fingerprint)
                return True
            state.unlock(student)
            outcome = Outcome.unchanged(student, last)
    except Exception as exc:  # noqa: BLE001 (classified: never recorded, never the student's)
        if outcomes.of_exception(exc) not in outcomes.RETRIED:
            raise
        state.unlock(student)
        run.down = run.down or outcomes.describe(exc)
        outcome = Outcome(student, "error", f"not graded in this run: {outcomes.describe(exc)}")
    run.outcomes[student] = outcome
    tell("done", student, outcome)
    return False


def finished(run, reply, state, prints, tell, again: Retrying | None = None) -> None:
    """Record what grading one submission gave (a job's reply), release it and tell. A
    transient fault with `again` and tries left waits there instead, still claimed (told as
    "retry"); any other fault of grading is told, not recorded (its scores in the gradebook
    marked as not reliable), and graded by the next run; one of the infrastructure's that
    outlived its tries (with `again`) is `run.down`."""
    student = reply["student"]
    side = outcomes.of_reply(reply)
    seconds = reply["seconds"]  # every reply says how long grading took (0 for a fault)
    if side in outcomes.RETRIED and again is not None:
        delay = again.later(student)
        if delay is not None:
            reason = f"{reply.get('reason', '')}; trying again in {delay:g} s"
            tell("retry", student, Outcome(student, "retry", reason, seconds=seconds))
            return
    if reply.get("graded"):
        outcome = Outcome(student, "graded", total=reply.get("total"), seconds=seconds)
        outcome.late_penalty = float(reply.get("late_penalty") or 0.0)
        if reply.get("feedback_error"):
            outcome.reason = f"feedback not written: {reply['feedback_error']}"
    elif side in outcomes.RECORDED:
        outcome = Outcome(student, "not graded", reply.get("reason", ""), seconds=seconds)
    else:
        outcome = Outcome(student, "error", reply.get("reason", ""), seconds=seconds)
    if side in outcomes.RECORDED:  # a fault of grading is tried again by the next run
        try:
            if outcome.status == "not graded":  # its row first: no score, then its outcome
                outcome.replaced = outcomes.retrying(
                    state.take_back, student, retries=state.retries
                )
            state.record(student, prints[student], outcome)
        except Exception as exc:  # noqa: BLE001 (classified: never the student's)
            if outcomes.of_exception(exc) not in outcomes.RETRIED:
                raise
            why = f"{outcome.status}, but its outcome was not recorded: {outcomes.describe(exc)}"
            outcome = Outcome(student, "error", why, seconds=seconds)
            side = outcomes.TRANSIENT
    else:  # its scores in the gradebook are not reliable: said there, with the cause
        state.fail(student, prints[student], outcome)
    if again is not None and side in outcomes.RETRIED and outcome.status == "error":
        run.down = run.down or outcome.reason
    state.unlock(student)
    run.outcomes[student] = outcome
    tell("done", student, outcome)


def lost_reply(
    student: str, died: bool, seconds: float, over: tuple[str, str] | None = None
) -> dict:
    """The reply for a submission whose job died (a fault of grading: tried again next run)
    or was stopped past its time (GradingJob.over: the student's, recorded as not graded, or
    a stall of the infrastructure's, tried again)."""
    if died:
        return {
            "student": student,
            "graded": False,
            "fault": True,
            "side": outcomes.GRADING,
            "seconds": 0.0,
            "reason": "its grading process ended unexpectedly",
        }
    side, reason = over or (outcomes.STUDENT, f"grading took longer than {seconds:g} s")
    return {
        "student": student,
        "graded": False,
        "fault": side != outcomes.STUDENT,
        "side": side,
        "seconds": seconds if side == outcomes.STUDENT else 0.0,
        "reason": reason,
    }


def _job_lost(run, job, state, prints, died, seconds, tell, again=None, over=None) -> None:
    student = job.task
    job.kill()
    job.task = None
    if student is not None:
        finished(run, lost_reply(student, died, seconds, over), state, prints, tell, again)
