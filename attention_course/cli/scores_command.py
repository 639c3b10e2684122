"""`attention-course scores`: the gradebook's scores of an assignment."""

from __future__ import annotations

import argparse

from attention_course.cli.common import (
    course_root,
    known,
    print_scores,
)
from attention_course.cli.options import (
    add_assignment,
    add_course_option,
    add_db,
)
from attention_course.course import Course
from attention_course.errors import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scores", help="print the gradebook's scores for an assignment")
    add_assignment(p)
    add_course_option(p)
    add_db(p)
    p.set_defaults(run=scores)


def scores(args: argparse.Namespace) -> int:
    from attention_course.classgrade.nbgrader_api import gradebook_exists, gradebook_settings

    root = course_root(args)
    assignment = known(Course.load(root), args.assignment)
    if not gradebook_exists(root):  # a mistyped SQLite path: looking would make an empty one
        path = gradebook_settings(root)[0].removeprefix("sqlite:///").split("?")[0]
        raise UserError(f"no gradebook at {path} (autograde the assignment first)")
    print_scores(assignment, root)
    return 0
