"""Grading one check: the notebook a student sent, graded as autograde grades it (the same
graders, sandbox and secret per-submission seed), answered with the feedback's PASS/FAIL lines
and hints only, in a pool of worker processes of a bounded size."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
from dataclasses import dataclass
from pathlib import Path

STUDENTS, GRADING = "student", "grading"  # whose fault a check that gives no score is


@dataclass(frozen=True)
class Graded:
    """A check's outcome: a score and the student's feedback, or a failure and whose it is."""

    score: float | None
    max_score: float | None
    feedback: str  # what the student reads
    detail: str  # for the instructor only (the seed, or why grading failed)
    fault: str | None = None  # None when graded; STUDENTS or GRADING


def grade_check(course_root: str, assignment: str, notebook: str, late_note: str) -> Graded:
    """Grade `notebook` (a file of the service's own) for `assignment`, in this process: the
    graders here, the student's code in the sandbox (grade_file), the seed drawn from the
    course's grading key and the notebook's bytes. The feedback is that of each function's
    grade cell (feedback.cell_feedback): never a grader, an input or an expected value."""
    from attention_course.course import Course
    from attention_course.errors import SandboxUnavailable, UserError
    from attention_course.grading.feedback import cell_feedback
    from attention_course.grading.graders import GradingError, grade_file
    from attention_course.grading.notebook import NotebookError

    try:
        course = Course.load(course_root)
        report = grade_file(Path(notebook), assignment, course=course)
    except NotebookError as exc:
        return Graded(None, None, f"not checked: {exc}", str(exc), STUDENTS)
    except (GradingError, SandboxUnavailable, UserError) as exc:
        said = "not checked: the graders could not run (not your fault); try again later"
        return Graded(None, None, said, str(exc), GRADING)
    notes = [late_note] if late_note else []
    lines = [f"{assignment}: {report.score:g} / {report.max_score:g} points"]
    lines += [cell_feedback(report, f, notes).rstrip("\n") for f in report.functions]
    return Graded(report.score, report.max_score, "\n\n".join(lines) + "\n", f"seed {report.seed}")


PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies


def _start_worker(service: int) -> None:
    """A grading worker: dies with the service (killed, it would otherwise wait forever on
    its queue), with the graders' memory limit."""
    import ctypes
    import os
    import signal

    from attention_course.grading.graders import limit_grader_memory

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0 or os.getppid() != service:
        os._exit(1)  # no such guard here, or the service is already gone
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_DATA)  # the service's own limit is not its
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))
    limit_grader_memory()


class GradingPool:
    """At most `workers` checks graded at once, each in a worker process (spawned, so that it
    holds nothing of the service's; the graders' memory limit set in it; it dies with the
    service). A worker that dies fails its check as grading's fault, and the pool is made
    again."""

    def __init__(self, workers: int):
        self.workers = workers
        self._lock = threading.Lock()
        self._pool = self._new()

    def _new(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(
            self.workers,
            multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(os.getpid(),),
        )

    def grade(self, course_root: Path, assignment: str, notebook: Path, late_note: str) -> Graded:
        with self._lock:
            pool = self._pool
        try:
            future = pool.submit(
                grade_check, str(course_root), assignment, str(notebook), late_note
            )
            return future.result()
        except concurrent.futures.process.BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = self._new()
            said = "not checked: the graders could not run (not your fault); try again later"
            return Graded(None, None, said, "the grading worker process died", GRADING)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
