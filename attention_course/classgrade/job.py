"""One grading job: a long-lived process that autogrades one submission after another.

`python -m attention_course.classgrade.job COURSE [--unsandboxed]` reads one JSON task per line on
stdin ({"assignment", "student", "feedback", "stall"}) and answers each on the pipe it was given
as stdout: whether nbgrader graded it, why not, the total stored in the gradebook, and whether
its feedback was written. While it grades, it also tells the run of each wait on the gradebook
or the disk that lasts ({"student", "waiting": on what or null, "since", "waited"}: waits.py),
which the submission's deadline does not count. nbgrader's configuration and API are loaded
once per job, not once per submission. The job never runs student code itself (the sandbox
does). It dies with the process that started it, so a killed `autograde` leaves nothing behind
that goes on writing grades. What it could not grade is said in its log (stderr), with the
traceback that caused it.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import IO

from attention_course import trace
from attention_course.startup import skip_slow_imports

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15


def die_with_parent(parent: int | None = None) -> None:
    """Ask the kernel to kill this process when the process that started it (`parent`, else
    this one's parent now) dies."""
    parent = os.getppid() if parent is None else parent
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # (the kernel reads no more)
    if os.getppid() != parent:  # it died before the request took effect
        sys.exit("the process that started this grading job is gone")


def name_this_process(name: bytes) -> None:
    """The name `ps` and /proc/PID/comm show (a forked job's command line is its parent's)."""
    ctypes.CDLL(None).prctl(PR_SET_NAME, ctypes.c_char_p(name))  # (cut to 15 bytes there)


def preload() -> None:
    """Import what a job imports to serve and grade (about a second of CPU): a job forked
    after this (jobs.Forked) starts with it all."""
    import sqlite3  # noqa: F401

    import alembic.runtime.migration  # noqa: F401 (the gradebook's version, read as it opens)
    import alembic.script  # noqa: F401
    import nbgrader.apps  # noqa: F401
    import sqlalchemy.dialects.sqlite  # noqa: F401

    import attention_course.classgrade.gradebook_pool  # noqa: F401
    import attention_course.classgrade.nbgrader_api  # noqa: F401
    import attention_course.classgrade.outcomes  # noqa: F401
    import attention_course.grading.graders  # noqa: F401
    import attention_course.grading.preprocessors  # noqa: F401
    import attention_course.grading.quiz_answers  # noqa: F401


def _total(root: Path, assignment: str, student: str) -> tuple[float | None, float]:
    """nbgrader's total of the submission and its late penalty (0 when on time)."""
    from attention_course.classgrade.nbgrader_api import LATE_PENALTY, gradebook_scores

    row = gradebook_scores(assignment, root, student).get(student, {})
    return row.get("total"), row.get(LATE_PENALTY, 0.0)


def _fault(reply: dict, side: str, reason: str) -> dict:
    reply.update(graded=False, fault=True, side=side, reason=reason)
    reply.pop("total", None)
    return reply


class Replies:
    """The job's answers, one JSON line each, written whole from any of its threads (the
    watchdog of its waits tells of them while the main thread grades)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream, self.guard = stream, threading.Lock()

    def say(self, line: dict) -> None:
        with self.guard:
            self.stream.write(json.dumps(line) + "\n")
            self.stream.flush()


def _telling(replies: Replies | None, student: str):
    """What tells the run of the submission's waits (waits.Waits.listener)."""
    if replies is None:
        return None

    def told(wait, waited: float) -> None:
        now = {"waiting": wait.what, "since": wait.since} if wait else {"waiting": None}
        replies.say({"student": student, **now, "waited": round(waited, 3)})

    return told


def _said_in_log(task: dict, reply: dict, text: str = "") -> None:
    """A line in the job's log (its stderr) for a submission it could not grade, with the
    traceback of its cause from nbgrader's log (`text`)."""
    from attention_course.classgrade import outcomes

    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    name = f"{task['assignment']}/{task['student']}"
    whose = "the infrastructure" if reply.get("side") == outcomes.TRANSIENT else "grading"
    lines = [f"{stamp} {name}: not graded (a fault of {whose}): {reply.get('reason')}"]
    cause = outcomes.tracebacks(text)
    if cause:
        lines += ["  " + line for line in cause[-1][0]]
    print("\n".join(lines), file=sys.stderr, flush=True)


def grade(
    task: dict, root: Path, nb_api, unsandboxed: bool, replies: Replies | None = None
) -> dict:
    """Grade one submission; the reply says whose any failure is (outcomes.py): `side` is
    "student" (recorded), "grading" or "transient" (a fault of the database or the disk,
    tried again: a stall broken meanwhile is said as one). Its waits on the infrastructure are
    told on `replies` as they last (waits.py)."""
    from attention_course.classgrade import outcomes, waits
    from attention_course.classgrade.nbgrader_api import (
        CourseError,
        autograde,
        failure_reason,
        generate_feedback,
    )
    from attention_course.settings import PACING

    assignment, student = task["assignment"], task["student"]
    start = time.monotonic()
    waits.WAITS.stall = float(task.get("stall") or PACING.stall)
    waits.WAITS.reset(_telling(replies, student))
    reply: dict = {"student": student, "graded": False}
    text = ""
    try:
        with trace.stage("nbgrader steps"):
            result = autograde(assignment, student, root, unsandboxed, nb_api=nb_api)
        reply["graded"] = bool(result.get("success"))
        if not reply["graded"]:
            text = (result.get("log") or "") + (result.get("error") or "")
            side = outcomes.of_log(text)
            if side in outcomes.RETRIED:
                reason = waits.stalled(outcomes.infrastructure_reason(text))
            else:
                reason = failure_reason(result).removeprefix("not graded: ")
            reply.update(fault=side not in outcomes.RECORDED, side=side, reason=reason)
        else:
            with trace.stage("gradebook"):
                reply["total"], penalty = _total(root, assignment, student)
                if penalty:
                    reply["late_penalty"] = penalty
            if task.get("feedback"):
                try:
                    with trace.stage("feedback"):
                        generate_feedback(assignment, student, root, nb_api=nb_api)
                    reply["feedback"] = True
                except CourseError as exc:
                    said = str(exc)
                    if any(marker in said for marker in outcomes.DATABASE_MARKERS):
                        reason = waits.stalled(outcomes.database_reason(said))
                        _fault(reply, outcomes.TRANSIENT, reason)
                    else:  # (its last line: the cause, _check)
                        reply["feedback_error"] = said.splitlines()[-1][:300]
    except Exception as exc:  # noqa: BLE001 (never the student's: their code is in the sandbox)
        side = outcomes.of_exception(exc)
        reason = outcomes.describe(exc)
        _fault(reply, side, waits.stalled(reason) if side in outcomes.RETRIED else reason)
        text = traceback.format_exc()
    finally:
        waits.WAITS.reset(None)
    reply["seconds"] = round(time.monotonic() - start, 3)
    if not reply["graded"] and reply.get("side") != outcomes.STUDENT:
        _said_in_log(task, reply, text)
    trace.flush(student=student, graded=reply["graded"])
    return reply


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m attention_course.classgrade.job")
    parser.add_argument("course", type=Path)
    parser.add_argument("--unsandboxed", action="store_true")
    args = parser.parse_args(argv)
    die_with_parent()
    skip_slow_imports()
    serve(args.course.resolve(), args.unsandboxed)


def serve(root: Path, unsandboxed: bool) -> None:
    """Answer tasks read on stdin until it closes (the replies on stdout, as JSON lines)."""
    replies = Replies(os.fdopen(os.dup(1), "w"))  # the answers' own channel ...
    os.dup2(2, 1)  # ... and whatever nbgrader or a library prints goes to the log

    from attention_course.classgrade import gradebook, gradebook_pool, waits
    from attention_course.classgrade.nbgrader_api import api
    from attention_course.grading.graders import limit_grader_memory

    if not unsandboxed:
        from attention_course.sandbox import zygotes

        zygotes.start_ahead()  # they import while the run reads its course and submissions
    limit_grader_memory()
    gradebook_pool.share()  # one pool of gradebook connections for every submission
    nb_api = api(root, unsandboxed, in_process=True)
    postgres = gradebook.is_postgres(nb_api.coursedir.db_url)
    waits.watch(postgres=postgres, follow=threading.get_native_id())  # this thread grades
    replies.say({"ready": True})
    for line in sys.stdin:
        task = json.loads(line)
        replies.say(grade(task, root, nb_api, unsandboxed, replies))


if __name__ == "__main__":
    main()
