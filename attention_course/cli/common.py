"""What the commands share: the course a command works on, checked, and the gradebook's
scores as printed."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from attention_course.course import Course, find_course
from attention_course.errors import GradebookUnavailable, UserError

RERUN = "what was graded is kept; run the same command again to grade the rest"


def the_course(args: argparse.Namespace) -> Course:
    """The course of this command: --course, else $ATTENTION_COURSE_DIR, else the folder
    holding course.toml at or above the current one (UserError when there is none)."""
    return find_course(args.course)


def course_root(args: argparse.Namespace) -> Path:
    """The course folder of this command, checked to be an nbgrader course (and its
    gradebook to answer, for commands with --db)."""
    root = the_course(args).root
    if not (root / "nbgrader_config.py").is_file():
        raise UserError(f"{root}: not a course folder (no nbgrader_config.py)")
    if "db" in args:
        gradebook_url(root, args.db)
    return root


def known(course: Course, assignment: str) -> str:
    names = course.all_assignments
    if assignment not in names:
        raise UserError(f"unknown assignment {assignment!r} (known: {', '.join(names)})")
    return assignment


def gradebook_url(root: Path, db: str | None) -> str:
    """The gradebook this command uses (--db wins, for this command and every process it
    starts), checked to answer; a one-line error if it does not."""
    from attention_course.classgrade import gradebook
    from attention_course.classgrade.nbgrader_api import CourseError, gradebook_settings

    if db:
        os.environ[gradebook.DB_ENV] = gradebook.normalize(db)
    try:
        url, _ = gradebook_settings(root)
        gradebook.check(url)
    except (GradebookUnavailable, CourseError) as exc:
        raise UserError(str(exc)) from None
    return url


def print_scores(assignment: str, root: Path, reasons: bool = True) -> None:
    """The gradebook's scores of an assignment, those not reliable marked (with `reasons`,
    why, and why each submission not graded was not)."""
    from attention_course.classgrade.nbgrader_api import gradebook_records, gradebook_scores
    from attention_course.reports.tables import class_table, score_columns

    rows = gradebook_scores(assignment, root)
    records = gradebook_records(assignment, root)  # which scores are not reliable, and why
    columns = score_columns(assignment, root)
    print(class_table(rows, columns, f"{assignment} (gradebook)", records, reasons))


def check_records(args: argparse.Namespace):
    """The course folder of a hub-check command and its checks' records (the gradebook's
    database)."""
    from attention_course.classgrade.nbgrader_api import open_gradebook
    from attention_course.integrations.check_limits import CheckRecords

    root = course_root(argparse.Namespace(course=args.course))
    url = gradebook_url(root, args.db)
    open_gradebook(root)  # nbgrader's tables first: it stamps only an empty database
    return root, CheckRecords(url)
