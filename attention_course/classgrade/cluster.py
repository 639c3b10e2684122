"""Grading a class on a Dask cluster: one task per submission, graded on a worker by the same
grading job (job.py), sandbox and graders as local grading.

The client (`grade_on_cluster`, called by `classgrade.autograde_class`) sends each submission
that is new or changed as a task and tells each outcome as it comes back, so a run reports,
resumes and keeps its state exactly as a local one. A task (`grade_submission`) runs on a
worker that sees the course folder at the same path (a shared file system). The task, not the
client, claims its submission for as long as it grades it, as a local run does (its lock in
the course folder's .grading/<assignment>/, and the gradebook's advisory lock when the
gradebook is PostgreSQL), so no submission is graded twice at once, whatever Dask retries or
reruns: a task that finds the claim taken waits a little, then says "busy". Under the claim it
hands the submission to a long-lived grading job of that worker process, under the
submission's deadline; the job writes the scores into the gradebook, and the task records the
outcome in .grading/ before it lets go. A task no longer wanted (its client cancelled it or
died, or the worker lost its scheduler) kills its grading job and records nothing. A worker
that dies mid-task dies with its grading jobs (and its claims); the scheduler gives the task to
another worker. A lost scheduler ends the run with SchedulerLost (one line): what was graded
is kept, and the same command grades the rest.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import CancelledError, ThreadPoolExecutor
from dataclasses import asdict, fields
from pathlib import Path

from attention_course.classgrade import outcomes, waits
from attention_course.classgrade.gradebook import DB_ENV, Records, SubmissionLocks, is_postgres
from attention_course.classgrade.jobs import (
    STATE_DIR,
    ClassRun,
    GradingJob,
    Outcome,
    Retrying,
    State,
    claim,
    finished,
    lost_reply,
)
from attention_course.classgrade.nbgrader_api import CourseError, gradebook_settings
from attention_course.course import Course
from attention_course.errors import GradebookUnavailable
from attention_course.grading.fingerprint import grading_code
from attention_course.settings import DASK_CONFIG, DEFAULT, PACING

WANTED = ("executing", "long-running", "resumed")  # a worker's states of a task still wanted
RUNNING = ("running", "paused", "closing_gracefully")  # a worker's states that finish its tasks
OUTCOME_FIELDS = [field.name for field in fields(Outcome)]


# ------------------------------------------------------------------ on the worker


def dask_setup(worker: object) -> None:
    """Dask's hook for a preloaded module (settings.DASK_CONFIG's "distributed.worker.preload"):
    a worker imports the gradebook's drivers as it starts, not in its first task (a fifth of a
    second of CPU)."""
    import psycopg  # noqa: F401
    import sqlalchemy.dialects.postgresql  # noqa: F401
    import sqlalchemy.orm  # noqa: F401


_records: dict[tuple[str, str, str], Records] = {}  # (gradebook, course, assignment) -> kept
_locks: dict[tuple[str, str, str, int], SubmissionLocks] = {}  # the same, and a thread -> kept
_idle: list[tuple[tuple, GradingJob]] = []  # jobs waiting for a task: (what they grade, job)
_idle_guard = threading.Lock()
# Grading jobs are started from this one long-lived thread: a job dies with the thread that
# started it (PR_SET_PDEATHSIG), so with the worker process, never with a task's thread.
_starter = ThreadPoolExecutor(1, thread_name_prefix="attention-course-jobs")


def _where() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _said(outcome: Outcome) -> dict:
    """What a task answers: the outcome's fields and where it was graded."""
    return {**asdict(outcome), "worker": _where()}


def _fault(student: str, reason: str) -> dict:
    """A fault of grading: never recorded, graded again by the next run."""
    return _said(Outcome(student, "error", reason))


def _silent(*_) -> None:
    """Progress is told by the client, not the worker."""


def _log(root: Path, text: str) -> None:
    """A line in this worker process's log in the course folder (beside its grading jobs')."""
    folder = root / STATE_DIR / "workers"
    folder.mkdir(exist_ok=True)  # in .grading/, which the task's State made
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    with open(folder / f"{socket.gethostname()}-{os.getpid()}.log", "a") as log:
        log.write(f"{stamp} {_where()} {text}\n")


def _start_job(root: Path, unsandboxed: bool, db_url: str) -> GradingJob:
    env = dict(os.environ, **{DB_ENV: db_url})
    env.pop("VIRTUAL_ENV", None)
    log_folder = root / STATE_DIR / "workers"
    log_folder.mkdir(exist_ok=True)  # in .grading/, which the task's State made
    with open(log_folder / f"{socket.gethostname()}-{os.getpid()}.log", "a") as log:
        job = GradingJob.start(root, unsandboxed, log, env)
    while not job.ready:
        ready, _, _ = select.select([job], [], [], max(0.0, job.deadline - time.monotonic()))
        replies = job.read() if ready else None
        if replies is None:
            job.kill()
            raise RuntimeError(f"a grading job did not start on {_where()} (see {log_folder})")
        job.ready = any(reply.get("ready") for reply in replies)
    return job


def _ask(job: GradingJob, task: dict, seconds: float, wanted) -> tuple[dict | None, bool]:
    """The job's reply to one task (None when the task stopped being `wanted` first: the job
    is killed), and whether the job can grade another. A job past the submission's time
    (GradingJob.over: its work, not its waits on the gradebook or the disk) is killed; a wait
    of the job's that lasts is told to the run that sent the task."""
    stall = float(task.get("stall") or PACING.stall)
    job.send(task["assignment"], task["student"], task["feedback"], seconds, stall)
    while True:  # (the time is looked at every task_poll seconds: never more than that late)
        ready, _, _ = select.select([job], [], [], PACING.task_poll)
        replies = job.read() if ready else []
        if replies is None:
            job.kill()
            return lost_reply(task["student"], True, seconds), False
        for reply in replies:
            if job.heard(reply):
                continue
            if reply.get("student") == task["student"]:
                job.task = None
                return reply, True
        _note_wait(job, task)
        over = job.over()
        if over is not None:
            job.kill()
            return lost_reply(task["student"], False, seconds, over), False
        if not wanted():
            job.kill()
            return None, False


def _note_wait(job: GradingJob, task: dict) -> None:
    """Tell the run a long wait of the job's on the infrastructure (GradingJob.wait_to_note)."""
    reason = job.wait_to_note()
    if reason is not None:
        _tell_run(task, "wait", reason)


def _tell_run(task: dict, kind: str, reason: str) -> None:
    """Say a retry or a long wait of the task's ("retry", "wait") to the run that sent it,
    as an event of the task's topic (Dask's events: the scheduler hands it to the client,
    which tells its progress). Nothing off a worker."""
    from distributed import get_worker

    try:
        worker = get_worker()
    except ValueError:  # not on a worker (called directly)
        return
    if task.get("events"):
        worker.log_event(
            task["events"], {"kind": kind, "student": task["student"], "reason": reason}
        )


def _still_wanted() -> Callable[[], bool]:
    """Whether the Dask task running in this thread is still wanted: not once the scheduler
    released it (the client that sent it cancelled it, or went away: Dask then lets go of
    every task only that client wanted) or the worker is closing (its scheduler is gone).
    Called from the task's own thread; the test it gives may be called from there only."""
    from distributed import get_worker

    try:
        worker = get_worker()
    except ValueError:  # not on a worker (called directly): wanted until it ends
        return lambda: True
    key = worker.get_current_task()

    def wanted() -> bool:
        task = worker.state.tasks.get(key)
        running = getattr(worker.status, "name", "running") in RUNNING
        return running and task is not None and task.state in WANTED

    return wanted


def _graded(task: dict, wanted) -> dict | None:
    """A grading job's reply for the task's submission (a job of this worker process, started
    if none is idle), or None if the task stopped being wanted while it graded."""
    root = Path(task["course"])
    key = (str(root), task["unsandboxed"], task["db"], task["code"])
    with _idle_guard:
        mine = [i for i, (k, _) in enumerate(_idle) if k == key]
        job = _idle.pop(mine.pop())[1] if mine else None  # the newest of them
    try:
        if job is None:
            job = _starter.submit(_start_job, root, task["unsandboxed"], task["db"]).result()
        if not wanted():  # stopped while its job started: the job waits for the next task
            _keep(key, job)
            return None
        reply, reusable = _ask(job, task, task["seconds"], wanted)
    except (RuntimeError, OSError) as exc:
        if job is not None:
            job.kill()
        return {"student": task["student"], "graded": False, "fault": True, "reason": str(exc),
                "seconds": 0.0}  # fmt: skip
    if reusable:
        _keep(key, job)
    return reply


def _claim(run: ClassRun, state: State, task: dict, wanted) -> bool:
    """Claim the submission for this task (jobs.claim: its lock in the course folder's
    .grading/, and the gradebook's advisory lock with PostgreSQL), waiting up to
    `task["patience"]` seconds, with backoff, for a claim another task still holds (a
    stopped run's task winding down). False with the outcome in `run` (busy, unchanged)."""
    student, waits = task["student"], PACING.claim_waits.waits()
    until = time.monotonic() + task["patience"]
    while not claim(run, state, student, task["fingerprint"], _silent):
        busy = run.outcomes[student].status == "busy"
        if not busy or time.monotonic() >= until or not wanted():
            if busy:
                run.outcomes[student].reason = "being graded elsewhere (another run or task)"
            return False
        time.sleep(next(waits))
    return True


def _graded_through_faults(task: dict, wanted) -> dict | None:
    """`_graded`, tried again here, still claimed, after a transient fault of the
    infrastructure (the gradebook did not answer: settings.RETRIES); after the last try its
    reply is a fault of grading (`jobs.finished` records nothing, the next run grades it)."""
    again = Retrying()
    while True:
        reply = _graded(task, wanted)
        if reply is None or outcomes.of_reply(reply) not in outcomes.RETRIED:
            return reply
        delay = again.later(task["student"])
        if delay is None:
            return reply
        _tell_run(task, "retry", f"{reply.get('reason', '')}; trying again in {delay:g} s")
        until = time.monotonic() + delay
        while time.monotonic() < until:
            if not wanted():
                return None
            time.sleep(PACING.task_poll)


def grade_submission(task: dict) -> dict:
    """A Dask task: claim one submission, grade it on this worker, record its outcome (as
    local grading does, under the claim) and say what it was (an Outcome's fields, plus where
    it was graded). A task that finds the submission claimed says "busy"; one that is no
    longer wanted stops grading and records nothing."""
    root, student, assignment = Path(task["course"]), task["student"], task["assignment"]
    if not (root / "nbgrader_config.py").is_file():
        return _fault(
            student,
            f"the course folder {root} is not on worker {_where()} (every worker needs the "
            "course folder at the same path: a shared file system)",
        )
    if grading_code(assignment, root) != task["code"]:
        return _fault(
            student,
            f"worker {_where()} has other graders or another version of attention-course than "
            "the run that sent the task (install the same on every worker)",
        )
    db, course_id = task["db"], task["course_id"]
    waits.watch(float(task.get("stall") or PACING.stall), postgres=is_postgres(db))
    shared = _locks_of(db, course_id, assignment) if is_postgres(db) else None
    records = _records_of(db, course_id, assignment)  # what every course folder sees
    state = State(root, assignment, shared, records)
    run = ClassRun(assignment, {}, force=task["force"])
    wanted = _still_wanted()
    name = f"{assignment}/{student}"
    try:
        if not _claim(run, state, task, wanted):
            return _said(run.outcomes[student])
        start = time.time()
        _log(root, f"claimed {name} for {task['key']}")
        reply = _graded_through_faults(task, wanted)
        end = time.time()  # before the claim is let go
        if reply is None:
            state.unlock(student)
            outcome = Outcome(student, "error", "stopped: the run that sent it is gone")
            ended = "stopped"
        else:
            finished(run, reply, state, {student: task["fingerprint"]}, _silent)
            outcome = run.outcomes[student]
            ended = outcome.status + (f" ({outcome.reason})" if outcome.status == "error" else "")
        _log(root, f"released {name} for {task['key']} held {start:.6f} {end:.6f}: {ended}")
        return _said(outcome)
    except GradebookUnavailable as exc:  # the advisory lock could not be asked for
        return _fault(student, str(exc))
    finally:
        state.close(keep=True)  # lets go of the claim whatever happened


def _locks_of(db: str, course_id: str, assignment: str) -> SubmissionLocks:
    """The gradebook's submission locks of an assignment, one session per thread of this
    worker process (not a new connection per task): each task lets go of its own claim."""
    key = (db, course_id, assignment, threading.get_ident())
    with _idle_guard:
        if key not in _locks:
            _locks[key] = SubmissionLocks(db, course_id, assignment)
        return _locks[key]


def _records_of(db: str, course_id: str, assignment: str) -> Records:
    """The gradebook's records of an assignment, one per worker process (one pool of
    connections for all its tasks, not a new engine per task)."""
    key = (db, course_id, assignment)
    with _idle_guard:
        if key not in _records:
            _records[key] = Records(db, course_id, assignment)
        return _records[key]


def _keep(key: tuple, job: GradingJob) -> None:
    """Keep a job for the next task; at most one per thread of this worker (the oldest go:
    a course graded before, other graders)."""
    from distributed import get_worker

    try:
        room = get_worker().state.nthreads
    except ValueError:  # not on a worker (called directly)
        room = 1
    with _idle_guard:
        _idle.append((key, job))
        old = _idle[: max(0, len(_idle) - room)]
        del _idle[: len(old)]
    for _, stale in old:
        stale.kill()


# ------------------------------------------------------------------ on the client


def local_cluster(workers: int, **options):
    """A Dask LocalCluster here of `workers` worker processes of one thread each, its
    scheduler and workers configured with settings.DASK_CONFIG (`options`: LocalCluster's)."""
    import dask
    from distributed import LocalCluster

    with dask.config.set(DASK_CONFIG):  # the nannies hand it on to every worker they start
        return LocalCluster(
            n_workers=max(1, workers),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            **options,
        )


def connect(scheduler, jobs: int):
    """(client, close): a `distributed.Client` for `scheduler` (an address, "local" for a
    `local_cluster` of `jobs` worker processes here, or a Client, used as it is); a client
    made here is configured with settings.DASK_CONFIG."""
    import dask
    from distributed import Client

    if isinstance(scheduler, Client):
        return scheduler, lambda: None
    if scheduler == "local":
        cluster = local_cluster(jobs)
        with dask.config.set(DASK_CONFIG):
            client = Client(cluster)

        def close() -> None:
            client.close()
            cluster.close()

        return client, close
    # A scheduler that goes away is said in one line (SchedulerLost), not as the client's
    # batched stream's log of the broken connection, a traceback at INFO level.
    logging.getLogger("distributed.batched").setLevel(logging.WARNING)
    try:
        with dask.config.set(DASK_CONFIG):
            client = Client(scheduler)  # waits distributed.comm.timeouts.connect (Dask: 30 s)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise CourseError(f"cannot reach the Dask scheduler at {scheduler}: {reason}") from None
    return client, client.close


class SchedulerLost(RuntimeError):
    """The run lost its Dask scheduler: a fault of grading (what was graded is kept, nothing in
    flight is recorded, the same command grades the rest); the message is one line."""


def _lost(client) -> bool:
    return getattr(client, "status", "running") not in ("running", "newly-created")


def _outcome_of_failure(student: str, exc: BaseException) -> Outcome:
    from distributed import KilledWorker

    if isinstance(exc, KilledWorker):
        return Outcome(student, "error", "the Dask workers grading it died, again and again")
    return Outcome(student, "error", f"its Dask task failed: {_words(exc)}")


def _words(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def _lost_words(address: str, exc: BaseException) -> str:
    """The one line a lost scheduler is said in. Dask's client goes on trying to reach it and
    logs each failure with a traceback: from now on, this line says it."""
    logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
    if isinstance(exc, CancelledError):  # Dask cancels every future when the link breaks
        reason = "the connection to it broke"
    else:  # Dask's words name the connection: "in <TCP (closed) ...>: ConnectionResetError..."
        reason = re.sub(r"^in <[^>]*>: ", "", _words(exc))
    return (
        f"lost the Dask scheduler at {address}: {reason} (what was graded is kept; with the "
        "scheduler back, the same command grades the rest)"
    )


def _answer(reply: dict) -> Outcome:
    """The outcome a task said."""
    return Outcome(**{name: reply[name] for name in OUTCOME_FIELDS if name in reply})


def make_tasks(
    root: Path,
    run: ClassRun,
    feedback: bool,
    unsandboxed: bool,
    seconds: float,
    stall: float = PACING.stall,
    tag: str | None = None,
) -> Callable[[str, str], dict]:
    """What the tasks of a run are told, (student, fingerprint) -> task (plain data: it
    travels to a worker): the submission and its fingerprint when looked at, the grading code
    and gradebook to use, its time and stall limit, its Dask key (unique to the run: `tag`)
    and the topic of the events it tells the run (`events_topic(tag)`)."""
    db_url, course_id = gradebook_settings(root)
    tag = tag or uuid.uuid4().hex
    common = {
        "course": str(root),
        "assignment": run.assignment,
        "force": run.force,
        "feedback": feedback,
        "unsandboxed": unsandboxed,
        "db": db_url,
        "course_id": course_id,
        "code": grading_code(run.assignment, root),
        "seconds": seconds,
        "stall": stall,
        "patience": Course.load(root).limits.claim_patience,
        "events": events_topic(tag),
    }

    def task(student: str, fingerprint: str) -> dict:
        key = f"grade-{run.assignment}-{student}-{tag}"
        return {**common, "student": student, "fingerprint": fingerprint, "key": key}

    return task


def events_topic(tag: str) -> str:
    """The Dask event topic on which a run's tasks tell it their retries and long waits."""
    return f"attention-course-{tag}"


def grade_on_cluster(
    run: ClassRun,
    todo: list[tuple[str, str]],
    root: Path,
    state: State,
    client,
    unsandboxed: bool,
    feedback: bool,
    tell,
    seconds: float = DEFAULT.grading_timeout,
    stall: float = PACING.stall,
) -> None:
    """Grade `todo` (student, fingerprint) as one Dask task each, through `client` (see
    `connect`); outcomes into `run`. Each task claims, grades and records its submission on
    its worker; the client only skips what was graded since it looked, and tells (the tasks'
    retries and long waits too, which they send as events). SchedulerLost if the scheduler
    goes away (the tasks in flight are left to the next run)."""
    from distributed import as_completed

    prints = dict(todo)
    queue = [student for student, _ in todo]
    flying: dict = {}
    done = as_completed()
    tag = uuid.uuid4().hex
    make_task = make_tasks(root, run, feedback, unsandboxed, seconds, stall, tag)
    address = getattr(getattr(client, "scheduler", None), "address", None) or "?"

    def heard(event) -> None:  # (in the client's own thread: the CLI's progress is guarded)
        said = event[1] if isinstance(event, tuple) else event
        student = said.get("student") if isinstance(said, dict) else None
        if student in prints:
            kind = "retry" if said.get("kind") == "retry" else "wait"
            tell(kind, student, Outcome(student, kind, str(said.get("reason", ""))))

    client.subscribe_topic(events_topic(tag), heard)

    def unchanged(student: str) -> bool:
        if run.force or not state.cached(student, prints[student]):
            return False  # (the gradebook is asked only where the cache says it was graded)
        last = state.known(student, prints[student])
        if last is None:
            return False
        outcome = Outcome.unchanged(student, last)
        run.outcomes[student] = outcome
        tell("done", student, outcome)
        return True

    def send() -> None:
        room = PACING.in_flight(sum(client.nthreads().values()))
        while queue and len(flying) < room:
            student = queue.pop(0)
            if unchanged(student):  # graded by another run since this one looked
                continue
            task = make_task(student, prints[student])
            future = client.submit(grade_submission, task, key=task["key"], pure=False)
            flying[future] = student
            done.add(future)

    try:
        send()
        for future in done:
            student = flying.pop(future)
            try:
                outcome = _answer(future.result())
            except Exception as exc:  # noqa: BLE001 (any failure of the task is said in words)
                if _lost(client) or isinstance(exc, (CancelledError, OSError)):
                    flying[future] = student  # in flight: left to the next run
                    raise SchedulerLost(_lost_words(address, exc)) from None
                outcome = _outcome_of_failure(student, exc)
            run.outcomes[student] = outcome
            tell("done", student, outcome)
            send()
    except (OSError, TimeoutError, CancelledError) as exc:  # the scheduler went away
        raise SchedulerLost(_lost_words(address, exc)) from None
    finally:
        if not _lost(client):
            with contextlib.suppress(Exception):  # (the client closing meanwhile)
                client.unsubscribe_topic(events_topic(tag))
            if flying:
                client.cancel(list(flying))  # their workers stop grading them
