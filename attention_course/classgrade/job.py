"""One grading job: a long-lived process that autogrades one submission after another.

`python -m attention_course.classgrade.job COURSE [--unsandboxed]` reads one JSON task per line on
stdin ({"assignment", "student", "feedback"}) and answers each on the pipe it was given as
stdout: whether nbgrader graded it, why not, the total stored in the gradebook, and whether its
feedback was written. nbgrader's configuration and API are loaded once per job, not once per
submission. The job never runs student code itself (the sandbox does). It dies with the process
that started it, so a killed `autograde` leaves nothing behind that goes on writing grades.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import sys
import time
from pathlib import Path

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


def _total(root: Path, assignment: str, student: str) -> float | None:
    from attention_course.classgrade.nbgrader_api import gradebook_scores

    return gradebook_scores(assignment, root, student).get(student, {}).get("total")


def _fault(reply: dict, side: str, reason: str) -> dict:
    reply.update(graded=False, fault=True, side=side, reason=reason)
    reply.pop("total", None)
    return reply


def grade(task: dict, root: Path, nb_api, unsandboxed: bool) -> dict:
    """Grade one submission; the reply says whose any failure is (outcomes.py): `side` is
    "student" (recorded), "grading" or "transient" (a database fault, tried again)."""
    from attention_course.classgrade import outcomes
    from attention_course.classgrade.nbgrader_api import (
        CourseError,
        autograde,
        failure_reason,
        generate_feedback,
    )

    assignment, student = task["assignment"], task["student"]
    start = time.monotonic()
    reply: dict = {"student": student, "graded": False}
    try:
        with trace.stage("nbgrader steps"):
            result = autograde(assignment, student, root, unsandboxed, nb_api=nb_api)
        reply["graded"] = bool(result.get("success"))
        if not reply["graded"]:
            text = (result.get("log") or "") + (result.get("error") or "")
            side = outcomes.of_log(text)
            if side in outcomes.RETRIED:
                reason = outcomes.database_reason(text)
            else:
                reason = failure_reason(result).removeprefix("not graded: ")
            reply.update(fault=side not in outcomes.RECORDED, side=side, reason=reason)
        else:
            with trace.stage("gradebook"):
                reply["total"] = _total(root, assignment, student)
            if task.get("feedback"):
                try:
                    with trace.stage("feedback"):
                        generate_feedback(assignment, student, root, nb_api=nb_api)
                    reply["feedback"] = True
                except CourseError as exc:
                    if outcomes.of_log(str(exc)) in outcomes.RETRIED:
                        _fault(reply, outcomes.TRANSIENT, outcomes.database_reason(str(exc)))
                    else:
                        reply["feedback_error"] = str(exc).splitlines()[-1][:300]
    except Exception as exc:  # noqa: BLE001 (never the student's: their code is in the sandbox)
        _fault(reply, outcomes.of_exception(exc), outcomes.describe(exc))
    reply["seconds"] = round(time.monotonic() - start, 3)
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
    replies = os.fdopen(os.dup(1), "w")  # the answers' own channel ...
    os.dup2(2, 1)  # ... and whatever nbgrader or a library prints goes to the log

    from attention_course.classgrade import gradebook_pool
    from attention_course.classgrade.nbgrader_api import api
    from attention_course.grading.graders import limit_grader_memory

    if not unsandboxed:
        from attention_course.sandbox import zygotes

        zygotes.start_ahead()  # they import while the run reads its course and submissions
    limit_grader_memory()
    gradebook_pool.share()  # one pool of gradebook connections for every submission
    nb_api = api(root, unsandboxed, in_process=True)
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    for line in sys.stdin:
        task = json.loads(line)
        replies.write(json.dumps(grade(task, root, nb_api, unsandboxed)) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
