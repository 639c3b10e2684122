"""Grading a class on a Dask cluster: one task per submission, graded on a worker by the same
grading job (job.py), sandbox and graders as local grading.

The client (`grade_on_cluster`, called by `classgrade.autograde_class`) claims each
submission as local grading does (its lock, and the gradebook's advisory lock when the
gradebook is PostgreSQL), sends it as a task, and records the reply as it comes back, so a run
reports, resumes and keeps its state exactly as a local one. A task (`grade_submission`) runs
on a worker that sees the course folder at the same path (a shared file system): it hands the
submission to a long-lived grading job of that worker process, under the submission's
deadline, and the job writes the scores into the course's gradebook (PostgreSQL when workers
are on several machines). A worker that dies mid-task dies with its grading jobs; the
scheduler gives the task to another worker, and the client records the one reply it gets.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from attention_course.classgrade.gradebook import DB_ENV
from attention_course.classgrade.jobs import (
    STATE_DIR,
    ClassRun,
    GradingJob,
    State,
    claim,
    finished,
    lost_reply,
)
from attention_course.classgrade.nbgrader_api import CourseError, gradebook_settings
from attention_course.grading.fingerprint import grading_code
from attention_course.settings import DEFAULT

MIN_IN_FLIGHT = 64  # tasks sent ahead of the workers (each holds its submission's lock)


# ------------------------------------------------------------------ on the worker


_idle: list[tuple[tuple, GradingJob]] = []  # jobs waiting for a task: (what they grade, job)
_idle_guard = threading.Lock()
# Grading jobs are started from this one long-lived thread: a job dies with the thread that
# started it (PR_SET_PDEATHSIG), so with the worker process, never with a task's thread.
_starter = ThreadPoolExecutor(1, thread_name_prefix="attention-course-jobs")


def _where() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _fault(student: str, reason: str) -> dict:
    return {"student": student, "graded": False, "fault": True, "reason": reason, "seconds": 0.0}


def _start_job(root: Path, unsandboxed: bool, db_url: str) -> GradingJob:
    env = dict(os.environ, **{DB_ENV: db_url})
    env.pop("VIRTUAL_ENV", None)
    log_folder = root / STATE_DIR / "workers"
    log_folder.mkdir(parents=True, exist_ok=True)
    with open(log_folder / f"{socket.gethostname()}-{os.getpid()}.log", "a") as log:
        job = GradingJob(root, unsandboxed, log, env)
    while not job.ready:
        ready, _, _ = select.select([job], [], [], max(0.0, job.deadline - time.monotonic()))
        replies = job.read() if ready else None
        if replies is None:
            job.kill()
            raise RuntimeError(f"a grading job did not start on {_where()} (see {log_folder})")
        job.ready = any(reply.get("ready") for reply in replies)
    return job


def _ask(job: GradingJob, task: dict, seconds: float) -> tuple[dict, bool]:
    """The job's reply to one task, and whether the job can grade another."""
    job.send(task["assignment"], task["student"], task["feedback"], seconds)
    while True:
        wait = job.deadline - time.monotonic()
        ready, _, _ = select.select([job], [], [], max(0.0, min(wait, 1.0)))
        replies = job.read() if ready else []
        if replies is None or (not replies and time.monotonic() > job.deadline):
            job.kill()
            return lost_reply(task["student"], replies is None, seconds), False
        for reply in replies:
            if reply.get("student") == task["student"]:
                job.task = None
                return reply, True


def grade_submission(task: dict) -> dict:
    """A Dask task: grade one submission on this worker and say what it gave (the reply of a
    grading job, as local grading gets it, plus where it was graded)."""
    root, student = Path(task["course"]), task["student"]
    if not (root / "nbgrader_config.py").is_file():
        return _fault(
            student,
            f"the course folder {root} is not on worker {_where()} (every worker needs the "
            "course folder at the same path: a shared file system)",
        )
    code = grading_code(task["assignment"], root)
    if code != task["code"]:
        return _fault(
            student,
            f"worker {_where()} has other graders or another version of attention-course than "
            "the run that sent the task (install the same on every worker)",
        )
    key = (str(root), task["unsandboxed"], task["db"], code)
    with _idle_guard:
        mine = [i for i, (k, _) in enumerate(_idle) if k == key]
        job = _idle.pop(mine[-1])[1] if mine else None
    try:
        if job is None:
            job = _starter.submit(_start_job, root, task["unsandboxed"], task["db"]).result()
        reply, reusable = _ask(job, task, task["seconds"])
    except (RuntimeError, OSError) as exc:
        if job is not None:
            job.kill()
        return _fault(student, str(exc))
    if reusable:
        _keep(key, job)
    reply["worker"] = _where()
    return reply


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


def connect(scheduler, jobs: int):
    """(client, close): a `distributed.Client` for `scheduler` (an address, "local" for a
    LocalCluster of `jobs` worker processes here, or a Client, used as it is)."""
    from distributed import Client, LocalCluster

    if isinstance(scheduler, Client):
        return scheduler, lambda: None
    if scheduler == "local":
        cluster = LocalCluster(
            n_workers=max(1, jobs),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)

        def close() -> None:
            client.close()
            cluster.close()

        return client, close
    try:
        client = Client(scheduler)  # waits distributed.comm.timeouts.connect (Dask: 30 s)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise CourseError(f"cannot reach the Dask scheduler at {scheduler}: {reason}") from None
    return client, client.close


def _outcome_of_failure(student: str, exc: BaseException) -> dict:
    from distributed import KilledWorker

    if isinstance(exc, KilledWorker):
        return _fault(student, "the Dask workers grading it died, again and again")
    reason = " ".join(str(exc).split())[:300] or type(exc).__name__
    return _fault(student, f"its Dask task failed: {reason}")


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
) -> None:
    """Grade `todo` (student, fingerprint) as one Dask task each, through `client` (see
    `connect`); outcomes into `run`."""
    from distributed import as_completed

    db_url, _ = gradebook_settings(root)
    code = grading_code(run.assignment, root)
    prints = dict(todo)
    queue = [student for student, _ in todo]
    flying: dict = {}
    done = as_completed()
    tag = uuid.uuid4().hex[:8]

    def send() -> None:
        room = max(MIN_IN_FLIGHT, 2 * sum(client.nthreads().values()))
        while queue and len(flying) < room:
            student = queue.pop(0)
            if not claim(run, state, student, prints[student], tell):
                continue
            task = {
                "course": str(root),
                "assignment": run.assignment,
                "student": student,
                "feedback": feedback,
                "unsandboxed": unsandboxed,
                "db": db_url,
                "code": code,
                "seconds": seconds,
            }
            future = client.submit(
                grade_submission, task, key=f"grade-{run.assignment}-{student}-{tag}", pure=False
            )
            flying[future] = student
            done.add(future)

    try:
        send()
        for future in done:
            student = flying.pop(future)
            try:
                reply = future.result()
            except Exception as exc:  # noqa: BLE001 (any failure of the task is said in words)
                reply = _outcome_of_failure(student, exc)
            finished(run, reply, state, prints, tell)
            send()
    except BaseException:
        run.interrupted = True
        raise
    finally:
        if flying:
            client.cancel(list(flying))
        for student in flying.values():
            state.unlock(student)  # graded again by the next run
