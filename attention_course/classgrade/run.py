"""Autograding a class, as an instructor runs it every day: only what is new, never twice.

`autograde_class` records the assignment in the gradebook if it is not there yet, looks at
every submission first (saying in words why one cannot be graded), grades only submissions
whose grade the gradebook does not hold for this very version (new, changed, or missing from a
gradebook restored from a backup or new; every one with `force`), `jobs` at a time in
long-lived grading jobs, each submission under a deadline that counts its grading's work, not
its waits on the gradebook or the disk (waits.py), and regenerates the feedback of what it
graded. What each submission's last grading gave (its fingerprint: the submitted files and the
grading code; its outcome) is kept in the gradebook (gradebook.Records), with a copy in
`.grading/<assignment>/` of the course folder, a cache the gradebook overrules. Every record
is written after what it speaks of (the grade, or the submission's row with no score), so a
run stopped at any point (Ctrl-C, `kill -9`) is finished by the next with nothing lost or
counted twice; a submission being graded is marked so in the gradebook until its outcome is
recorded. A submission being graded by another run is left to it: each is claimed with a lock
in `.grading/`, and, when the gradebook is PostgreSQL, with an advisory lock in the database,
which runs on other machines see too (`gradebook.py`).

The submissions are graded by grading jobs on this machine, or, with `scheduler`, as one task
per submission on a Dask cluster (`cluster.py`) whose workers run the same grading jobs; both
report through the same outcomes, state and progress.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from attention_course.classgrade import gradebook, waits
from attention_course.classgrade.jobs import (
    STATE_DIR,
    ClassRun,
    GradingJob,
    Outcome,
    Retrying,
    State,
    _fingerprint,
    _job_lost,
    claim,
    finished,
)
from attention_course.classgrade.nbgrader_api import (
    CourseError,
    add_students,
    gradebook_settings,
    record_ungraded,
    register,
    registered,
    submitted_students,
)
from attention_course.classgrade.outcomes import TRANSIENT, describe, of_exception, retrying
from attention_course.course import Course
from attention_course.errors import GradebookUnavailable
from attention_course.grading.fingerprint import grading_code
from attention_course.grading.submissions import inspect
from attention_course.sandbox import confined
from attention_course.settings import DEFAULT_JOBS, PACING, RETRIES, Retries

__all__ = [
    "STATE_DIR",
    "ClassRun",
    "Outcome",
    "Pool",
    "autograde_class",
    "fork_jobs",
    "job_count",
    "start_jobs",
]


def autograde_class(
    assignment: str,
    root: Path,
    students: list[str] | None = None,
    jobs: int = DEFAULT_JOBS,
    force: bool = False,
    unsandboxed: bool = False,
    feedback: bool = True,
    progress: Callable | None = None,
    deadline: float | None = None,
    scheduler=None,
    retries: Retries = RETRIES,
    pool: Pool | None = None,
    stall: float = PACING.stall,
) -> ClassRun:
    """Grade what is new or changed in submitted/*/<assignment>/ (see the module's docstring).

    `progress(kind, student, outcome)` is told of each step: "missing" (with the students
    this course folder graded before whose outcome the gradebook does not hold, graded again
    now), "start" (with the number of submissions to grade as `student`), then "done" for
    every submission, and "retry" and "wait" as they happen. `deadline` is the time one
    submission's grading may work, end to end (default: the course's grading_timeout); its
    waits on the gradebook and the disk are not counted, and one longer than `stall` seconds
    is a stall (waits.py: tried again, then a fault of grading). `scheduler`: grade on a Dask
    cluster instead of `jobs` local grading jobs: a scheduler's address (tcp://HOST:8786),
    "local" (a Dask LocalCluster of `jobs` worker processes on this machine) or a
    `distributed.Client`.
    `retries`: how a transient fault of the gradebook is tried again (outcomes.py); "retry"
    is told of each such wait. A gradebook still unreachable after them: its submissions'
    outcomes are "error" (graded by the next run), or GradebookUnavailable for a step of
    the whole run. `pool`: the local grading jobs, started by the caller ahead of this call
    (`start_jobs`; closed here), else started here, as the run starts.
    """
    remote = scheduler is not None and scheduler != "local"
    if deadline is None:  # the course's (course.toml's [limits] grading_timeout)
        deadline = Course.load(root).limits.grading_timeout
    names = students if students is not None else submitted_students(assignment, root)
    if pool is None:
        count = job_count(jobs, len(names)) if scheduler is None else 0
        pool = start_jobs(root, assignment, count, unsandboxed)
    with pool:
        if not remote:  # a remote cluster's workers check their own sandbox
            confined.require(unsandboxed)
        db_url, course_id, state = _state(root, assignment, retries, stall)
        tell = progress or (lambda *a: None)
        waits.WAITS.reset(_noting(tell, stall))
        steady = _steadily(retries)
        close = None
        try:
            run, refused, todo, missing = _look(assignment, root, names, state, force, steady)
            if scheduler is not None and todo:  # an unreachable cluster is said before anything
                from attention_course.classgrade.cluster import connect

                scheduler, close = connect(scheduler, jobs)
            with gradebook.exclusive(db_url, course_id, root):  # one run sets the gradebook up
                _register(assignment, root, state, steady)
            if missing:
                tell("missing", missing, None)
            tell("start", len(todo) + len(refused), None)
            if refused:
                _refuse(run, refused, root, state, steady, tell)
            if todo:
                steady(gradebook.retry_races, add_students, [s for s, _ in todo], root)
            if todo and scheduler is not None:
                from attention_course.classgrade.cluster import grade_on_cluster

                grade_on_cluster(
                    run, todo, root, state, scheduler, unsandboxed, feedback, tell, deadline, stall
                )
            elif todo:
                times = (deadline, stall)
                _grade(run, todo, root, state, pool, unsandboxed, feedback, tell, times, retries)
        finally:
            waits.WAITS.reset(None)
            if close is not None:
                close()
            state.close()
        run.outcomes = {s: run.outcomes[s] for s in names if s in run.outcomes}
        return run


def _state(root: Path, assignment: str, retries: Retries, stall: float) -> tuple[str, str, State]:
    """The run's gradebook (its URL, the course's id) and its state there, with the submissions'
    locks runs and Dask tasks share on a PostgreSQL gradebook; this run's own waits on the
    gradebook watched: broken past the stall limit, said once long."""
    db_url, course_id = gradebook_settings(root)
    postgres = gradebook.is_postgres(db_url)
    waits.watch(stall, postgres=postgres, told_after=PACING.wait_noted)
    shared = gradebook.SubmissionLocks(db_url, course_id, assignment, retries) if postgres else None
    records = gradebook.Records(db_url, course_id, assignment)
    return db_url, course_id, State(root, assignment, shared, records, retries)


def _register(assignment: str, root: Path, state: State, steady: Callable) -> None:
    """The assignment in nbgrader's gradebook, and the engine's records' tables."""
    if not steady(registered, assignment, root):
        steady(register, assignment, root)
    if state.records is not None:
        steady(state.records.setup)


def _steadily(retries: Retries) -> Callable:
    """steady(step, *args, again=True): a step of the gradebook's, through its transient faults
    (`again`: tried again here; False for a step that tries again itself); GradebookUnavailable
    after them."""

    def steady(step, *args, again: bool = True):
        try:
            return retrying(step, *args, retries=retries) if again else step(*args)
        except Exception as exc:
            if of_exception(exc) != TRANSIENT or isinstance(exc, GradebookUnavailable):
                raise
            raise GradebookUnavailable(describe(exc)) from None

    return steady


Refused = tuple[str, str, Outcome]  # a submission that cannot be graded: student, fingerprint


def _look(
    assignment, root, names, state, force, steady
) -> tuple[ClassRun, list[Refused], list[tuple[str, str]], list[str]]:
    """Inspect every submission, recording nothing: the run with what needs no grading (the
    gradebook holds its outcome for this very version, graded here or in another course
    folder), those that cannot be graded (student, fingerprint, outcome), the (student,
    fingerprint) of each to grade, and the students among these two whose outcome this course
    folder's cache holds for this very version but the gradebook does not (restored from a
    backup taken before, or a new gradebook): graded again."""
    code = grading_code(assignment, root)
    run = ClassRun(assignment, {}, force=force)
    refused: list[Refused] = []
    todo: list[tuple[str, str]] = []
    missing: list[str] = []
    look = {} if force else steady(state.records.all, names, True)  # (a run has records)
    for student in names:
        found = inspect(root, assignment, student, code)
        fingerprint = _fingerprint(found)
        last = None if force else state.known(student, fingerprint, look)
        if last is not None:
            run.outcomes[student] = Outcome.unchanged(student, last)
            continue
        if not force and state.cached(student, fingerprint):
            missing.append(student)
        if found.reason:
            refused.append((student, fingerprint, Outcome(student, "not graded", found.reason)))
        else:
            todo.append((student, fingerprint))
    return run, refused, todo, missing


def _refuse(run: ClassRun, refused: list[Refused], root: Path, state: State, steady, tell) -> None:
    """Keep the submissions that cannot be graded, each claimed: first their rows in nbgrader's
    tables, with no score (an earlier version's taken back, nbgrader_api.record_ungraded), in
    one transaction, then each one's outcome. A run stopped at any point leaves each with both
    or neither, or its row alone (an outcome missing: the next run keeps it again). One another
    run holds is left to it."""
    mine = [item for item in refused if state.lock(item[0])]
    try:
        if mine:
            students = [student for student, _, _ in mine]
            earlier = steady(gradebook.retry_races, record_ungraded, run.assignment, students, root)
            for student, fingerprint, outcome in mine:
                outcome.replaced = earlier.get(student)
                steady(state.record, student, fingerprint, outcome, again=False)
    finally:
        for student, _, _ in mine:
            state.unlock(student)
    held = {student for student, _, _ in mine}
    for student, _, outcome in refused:
        if student not in held:
            outcome = Outcome(student, "busy", "being graded by another run")
        run.outcomes[student] = outcome
        tell("done", student, outcome)


def job_count(jobs: int, submissions: int) -> int:
    """How many grading jobs a local run starts: `jobs` (at least one), never more than the
    submissions it has."""
    return min(max(1, jobs), submissions)


def start_jobs(root: Path, assignment: str, count: int, unsandboxed: bool = False) -> Pool:
    """`count` grading jobs for a class run on this machine, started now, ahead of the run
    (the run closes them): their imports (a second of CPU each) overlap what the run does
    before it has work for them (reading the course's configuration, its look at the sandbox,
    the submissions and the gradebook), which leaves a core idle."""
    return Pool(root, assignment, count, unsandboxed, GradingJob.start)


def fork_jobs(root: Path, assignment: str, count: int, unsandboxed: bool) -> Pool:
    """The same jobs forked from this process, which imports what they need once for all
    (GradingJob.fork): for a command that has opened nothing yet. A process that runs other
    threads (the command called from a notebook's kernel) starts them anew: a fork would copy
    those threads' locks as they are."""
    lone = threading.active_count() == 1
    return Pool(root, assignment, count, unsandboxed, GradingJob.fork if lone else GradingJob.start)


class Pool:
    """The grading jobs of a run on this machine (`count` of them, made at once by `make`) and
    the log they write to, .grading/<assignment>/jobs.log (made with the first job). A job
    that replaces one that died later in the run is started anew (never forked from a process
    that has the run's files and connections open)."""

    def __init__(
        self,
        root: Path,
        assignment: str,
        count: int,
        unsandboxed: bool,
        make: Callable[..., GradingJob],
    ) -> None:
        self.root, self.unsandboxed = root, unsandboxed
        self.log_path = root / STATE_DIR / assignment / "jobs.log"
        self.log: IO[str] | None = None
        self.jobs: list[GradingJob] = []
        try:
            for _ in range(count):
                self.jobs.append(self.new(make))
        except BaseException:
            self.close()
            raise

    def new(self, make: Callable[..., GradingJob] = GradingJob.start) -> GradingJob:
        if self.log is None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self.log = open(self.log_path, "a")
        return make(self.root, self.unsandboxed, self.log)

    def close(self) -> None:
        for job in self.jobs:
            job.kill()
        if self.log is not None:
            self.log.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _grade(run, todo, root, state, jobs, unsandboxed, feedback, tell, times, retries) -> None:
    """Grade `todo` in the pool's jobs: each submission sent to a job that is ready, its reply
    recorded (jobs.finished), a job that died or is past the submission's time (GradingJob.over)
    replaced by a new one. `times`: (the submission's seconds of work, the stall limit)."""
    seconds, stall = times
    log_path = jobs.log_path
    prints = dict(todo)
    queue = [s for s, _ in todo]
    again = Retrying(retries)

    def next_task() -> str | None:
        """A submission to send now: one due again after a transient fault, else the next
        one this run can claim (none once a fault of the infrastructure outlived its tries:
        the gradebook or the disk is down, and each would wait its tries out)."""
        student = again.next()
        if student is not None:
            return student
        while queue and not run.down:
            student = queue.pop(0)
            if claim(run, state, student, prints[student], tell):
                return student
        return None

    pool = jobs.jobs
    for job in pool:  # started ahead: a run that waited for the gradebook did not keep it
        job.time_start_from_now()
    try:
        while (queue and not run.down) or again.due or any(job.task for job in pool):
            for job in pool:
                while job.ready and job.task is None:
                    student = next_task()
                    if student is None:
                        break
                    job.send(run.assignment, student, feedback, seconds, stall)
            # a look each second at least: at the jobs' deadlines, and a retry once due
            retry = again.wait()
            wait = 1.0 if retry is None else min(retry, 1.0)
            ready, _, _ = select.select(pool, [], [], wait)
            for job in list(pool):
                replies = job.read() if job in ready else []
                late = time.monotonic() > job.deadline
                if not job.ready and (replies is None or late):
                    raise CourseError(f"a grading job did not start (see {log_path})")
                for reply in replies or []:
                    if reply.get("ready"):
                        job.ready = True
                    elif not job.heard(reply):
                        finished(run, reply, state, prints, tell, again)
                        job.task = None
                _note_wait(job, tell)
                over = None if replies is None else job.over()
                if replies is None or over is not None:  # a fresh job in its place
                    _job_lost(run, job, state, prints, replies is None, seconds, tell, again, over)
                    pool[pool.index(job)] = jobs.new()
        for student in queue:  # not sent: the infrastructure is down
            why = f"not graded in this run: {run.down} (no more submissions were sent)"
            run.outcomes[student] = Outcome(student, "error", why)
            tell("done", student, run.outcomes[student])
    finally:
        for job in pool:
            job.kill()
            if job.task:
                state.unlock(job.task)
        for student in list(again.due):
            state.unlock(student)


RUN = "(this run)"  # who waits, in the progress, when the run itself waits


def _noting(tell, stall: float):
    """What tells the run's progress of a wait of the run's own on the gradebook (waits.py)."""

    def told(wait, waited: float) -> None:
        if wait is not None:
            lasted = time.monotonic() - wait.since
            reason = f"waiting on {wait.what} for {lasted:.0f} s (a stall after {stall:g} s)"
            tell("wait", RUN, Outcome(RUN, "wait", reason))

    return told


def _note_wait(job: GradingJob, tell) -> None:
    """Say a long wait of a job's submission on the infrastructure in the run's progress."""
    reason = job.wait_to_note()
    if reason is not None and job.task is not None:
        tell("wait", job.task, Outcome(job.task, "wait", reason))
