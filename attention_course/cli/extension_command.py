"""`attention-course extension`: more time for one student (nbgrader's extension)."""

from __future__ import annotations

import argparse

from attention_course.cli.common import (
    course_root,
    known,
)
from attention_course.cli.options import (
    add_assignment,
    add_course_option,
    add_db,
)
from attention_course.course import Course
from attention_course.errors import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "extension",
        help="give one student more time for an assignment (nbgrader's extension)",
        description="Give STUDENT more time than the assignment's due date (set with `nbgrader "
        "db assignment add ASSIGNMENT --duedate=...`), kept in the gradebook as nbgrader keeps "
        "an extension: autograde's late penalty, the feedback, the scores, the report, the "
        "export and the Check button all use the student's own due date. Extensions do not "
        "add up: the last one given stands; --hours 0 takes it back. Prints the student's "
        "due date.",
    )
    add_assignment(p)
    p.add_argument("student", metavar="STUDENT", help="the student's nbgrader id")
    p.add_argument(
        "--hours", type=float, default=None, help="hours after the assignment's due date"
    )
    p.add_argument("--days", type=float, default=None, help="days after the due date")
    add_course_option(p)
    add_db(p)
    p.set_defaults(run=extension)


def extension(args: argparse.Namespace) -> int:
    from attention_course.classgrade.nbgrader_api import (
        CourseError,
        gradebook_scores,
        grant_extension,
    )
    from attention_course.integrations.check_limits import readable

    root = course_root(args)
    assignment = known(Course.load(root), args.assignment)
    if (args.hours is None) == (args.days is None):
        raise UserError("say how long: --hours N or --days N (0 takes the extension back)")
    hours = args.hours if args.hours is not None else args.days * 24
    if not 0 <= hours <= 24 * 366:
        raise UserError("an extension is between 0 and 366 days")
    try:
        due = grant_extension(assignment, args.student, root, hours)
    except CourseError as exc:
        raise UserError(str(exc)) from None
    given = f"{hours:g} hours" if hours else "no extension"
    when = readable(due) if due is not None else "none: the assignment has no due date"
    print(f"{args.student}, {assignment}: {given}; their due date: {when}")
    if args.student in gradebook_scores(assignment, root, args.student):
        print(
            f"{args.student} was graded already: `attention-course autograde {assignment} "
            f"--student {args.student} --force` grades the submission again under this due "
            "date (its late penalty and feedback)"
        )
    return 0
