"""`attention-course release`: regenerate release/ from source/ with nbgrader."""

from __future__ import annotations

import argparse

from attention_course.cli.common import (
    course_root,
)
from attention_course.cli.options import (
    add_course_option,
    add_db,
)
from attention_course.errors import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "release",
        help="regenerate release/ from source/ with nbgrader",
        description="Regenerate release/<assignment>/ from source/ (solutions and hidden "
        "tests stripped) and record the assignments in the gradebook. Commit the result.",
    )
    p.add_argument(
        "assignments",
        nargs="*",
        metavar="ASSIGNMENT",
        help="assignments to release (default: every one in source/)",
    )
    add_course_option(p)
    add_db(p)
    p.set_defaults(run=release)


def release(args: argparse.Namespace) -> int:
    from attention_course.classgrade.nbgrader_api import CourseError
    from attention_course.classgrade.nbgrader_api import release as release_assignments

    root = course_root(args)
    try:
        names = release_assignments(root, args.assignments or None)
    except CourseError as exc:
        raise UserError(str(exc)) from None
    for name in names:
        print(f"released {name} -> {root / 'release' / name}/")
    return 0
