"""`attention-course autograde`: grade what is new or changed in submitted/ into the gradebook."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import TYPE_CHECKING

from attention_course.cli.common import (
    RERUN,
    gradebook_url,
    known,
    print_scores,
    the_course,
)
from attention_course.cli.options import (
    add_assignment,
    add_course_option,
    add_db,
    add_unsandboxed,
    positive,
)
from attention_course.errors import GradebookUnavailable, SandboxUnavailable, UserError
from attention_course.settings import DEFAULT_JOBS

if TYPE_CHECKING:
    from attention_course.classgrade.run import Pool


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "autograde",
        help="grade what is new or changed in submitted/ into the gradebook",
        description="Autograde submitted/<student>/<assignment>/ with nbgrader: only "
        "submissions that are new or changed since they were last graded (--force: all), "
        "JOBS at a time, each under a deadline, with their feedback. Records the assignment "
        "in the gradebook first if needed. A run stopped at any point is finished by the next. "
        "Prints progress, the gradebook's scores, and why each ungraded submission was not "
        "graded. Exit 0 when every submission has a score or a recorded reason.",
    )
    add_assignment(p)
    p.add_argument(
        "--student",
        action="append",
        metavar="ID",
        help="grade only this student (repeat for several; default: every submitted student)",
    )
    p.add_argument(
        "--jobs",
        type=positive,
        default=DEFAULT_JOBS,
        help=f"submissions graded side by side (default: {DEFAULT_JOBS}, the cores); with "
        "--scheduler local, the Dask worker processes",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on a Dask cluster, one task per submission: its scheduler's address "
        "(tcp://HOST:8786; the workers need this package and the course folder at the same "
        "path), or 'local' for a Dask LocalCluster of JOBS worker processes here",
    )
    p.add_argument(
        "--force", action="store_true", help="grade every submission again, changed or not"
    )
    p.add_argument(
        "--no-feedback",
        dest="feedback",
        action="store_false",
        help="do not write the graded submissions' feedback (nbgrader generate_feedback)",
    )
    p.add_argument(
        "--lms-push",
        action="store_true",
        help="then send the assignment's scores to the LMS (attention-course lms push: only "
        "what changed; needs course.toml's [lms])",
    )
    add_unsandboxed(p, "student's feedback")
    add_course_option(p)
    add_db(p)
    p.set_defaults(run=autograde)


def autograde(args: argparse.Namespace) -> int:
    """Once the command's arguments are known good, the grading jobs of a local run are
    forked from this process (run.fork_jobs: it has opened nothing yet and runs no thread):
    their zygotes' start overlaps this process's reading of the course's configuration and
    its look at the submissions and the gradebook."""
    from attention_course.classgrade import gradebook
    from attention_course.classgrade.nbgrader_api import submitted_students
    from attention_course.classgrade.run import fork_jobs, job_count

    course = the_course(args)
    root = course.root
    if not (root / "nbgrader_config.py").is_file():
        raise UserError(f"{root}: not a course folder (no nbgrader_config.py)")
    known(course, args.assignment)
    found = submitted_students(args.assignment, root)
    for student in args.student or []:
        if student not in found:
            raise UserError(f"no submission in submitted/{student}/{args.assignment}/")
    if not found:
        raise UserError(f"no submissions in {root / 'submitted'}/*/{args.assignment}/")
    if args.db:  # the jobs started next grade into it too
        os.environ[gradebook.DB_ENV] = gradebook.normalize(args.db)
    local = args.scheduler is None
    count = job_count(args.jobs, len(args.student or found)) if local else 0
    pool = fork_jobs(root, args.assignment, count, args.unsandboxed)
    try:
        return _autograde(args, pool, args.student or found)
    finally:
        pool.close()


def _autograde(args: argparse.Namespace, pool: Pool, students: list[str]) -> int:
    from attention_course.classgrade.cluster import SchedulerLost
    from attention_course.classgrade.nbgrader_api import CourseError
    from attention_course.classgrade.outcomes import TRANSIENT, describe, of_exception, one_line
    from attention_course.classgrade.outcomes import retrying as steady
    from attention_course.classgrade.run import autograde_class
    from attention_course.reports.tables import class_run_lines

    root = pool.root  # a course folder, checked by `autograde`
    url = gradebook_url(root, args.db)
    progress = _progress(args.assignment, len(students))

    if args.scheduler not in (None, "local") and url.startswith("sqlite"):
        print(
            "note: the gradebook is a SQLite file; Dask workers on other machines need a "
            "PostgreSQL gradebook (--db)",
            file=sys.stderr,
        )
    try:
        run = autograde_class(
            args.assignment,
            root,
            students=args.student,
            jobs=args.jobs,
            force=args.force,
            unsandboxed=args.unsandboxed,
            feedback=args.feedback,
            progress=progress,
            scheduler=args.scheduler,
            pool=pool,
        )
    except SandboxUnavailable as exc:
        raise UserError(str(exc)) from None
    except GradebookUnavailable as exc:  # still unreachable after the retries: grading's fault
        print(f"attention-course: error: {one_line(str(exc))}; {RERUN}", file=sys.stderr)
        return 1
    except CourseError as exc:
        raise UserError(str(exc).replace("\n", " ")) from None
    except SchedulerLost as exc:  # a fault of grading, not of the input: exit 1
        print(f"attention-course: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "\nautograde interrupted: what was graded is kept; run the same command again to "
            "grade the rest",
            file=sys.stderr,
        )
        return 130
    try:
        steady(print_scores, args.assignment, root, False)  # (the run's lines say why not)
    except Exception as exc:  # noqa: BLE001 (classified: a gradebook gone after the run)
        if of_exception(exc) != TRANSIENT:
            raise
        print(f"attention-course: error: scores not shown: {describe(exc)}", file=sys.stderr)
        return 1
    for line in class_run_lines(run):
        print(line)
    pushed = True
    if args.lms_push:
        from attention_course.cli.lms_push import push_assignments

        pushed = push_assignments(root, [args.assignment])
    return 0 if run.ok and pushed else 1


def _progress(assignment: str, count: int):
    """What `autograde` prints as the run tells each step (run.autograde_class's `progress`),
    of `count` submitted students."""
    from attention_course.cli.progress import Progress

    bar: list[Progress] = []
    guard = threading.Lock()  # (a Dask run's events are told from its client's thread)

    def progress(kind: str, value, outcome) -> None:
        with guard:
            told(kind, value, outcome)

    def told(kind: str, value, outcome) -> None:
        if kind == "missing":  # graded before, not in this gradebook: restored, or new
            print(
                f"{assignment}: {len(value)} submissions graded before have no grade in "
                "this gradebook (restored from a backup, or a new one): grading them again",
                file=sys.stderr,
            )
            return
        if kind == "start":
            print(
                f"{assignment}: {value} of {count} submissions to grade (the "
                "others are unchanged since they were last graded)",
                file=sys.stderr,
            )
            bar.append(Progress(value, "graded or not"))
            bar[0].started()
            return
        if kind in ("retry", "wait"):  # the infrastructure's: waited for, or tried again
            if bar:
                bar[0].note(f"  {value}: {outcome.reason}")
            else:  # (the run waits before it starts grading)
                print(f"  {value}: {outcome.reason}", file=sys.stderr, flush=True)
            return
        detail = f"{outcome.total:g} points" if outcome.total is not None else outcome.reason
        if outcome.total is not None and outcome.late_penalty:
            grade = max(0.0, outcome.total - outcome.late_penalty)
            detail = (
                f"{grade:g} points (late: {outcome.total:g} less nbgrader's late penalty "
                f"{outcome.late_penalty:g})"
            )
        if outcome.replaced is not None:
            detail += f"; its earlier score, {outcome.replaced:g}, is now 0"
        bar[0].update(value, outcome.status, detail)

    return progress
