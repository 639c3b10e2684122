"""`attention-course gradescope`: a Gradescope autograder zip of an assignment."""

from __future__ import annotations

import argparse
from pathlib import Path

from attention_course.cli.common import (
    course_root,
)
from attention_course.cli.options import (
    add_assignment,
    add_course_option,
    add_unsandboxed,
)
from attention_course.errors import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gradescope",
        help="build a Gradescope autograder zip for an assignment",
        description="Build a Gradescope autograder (setup.sh, run_autograder, the graders, the "
        "reference and this package) that grades a submitted notebook with the same graders "
        "and sandbox as `check` and always writes results.json. Upload the zip as the "
        "autograder of a Gradescope programming assignment.",
    )
    add_assignment(p, "a graded assignment (not the quiz)")
    p.add_argument(
        "--out",
        type=Path,
        metavar="ZIP",
        help="the zip to write (default: gradescope-ASSIGNMENT.zip in the current folder)",
    )
    add_course_option(p, "the course folder whose graders go in")
    add_unsandboxed(p)
    p.set_defaults(run=gradescope)


def gradescope(args: argparse.Namespace) -> int:
    from attention_course.integrations.gradescope import AutograderError, build_autograder

    out = args.out or Path(f"gradescope-{args.assignment}.zip")
    try:
        names = build_autograder(args.assignment, out, course_root(args), args.unsandboxed)
    except AutograderError as exc:
        raise UserError(str(exc)) from None
    print(f"Wrote {out} ({len(names)} files): upload it as the autograder of a Gradescope")
    print(f"programming assignment; students submit {args.assignment}.ipynb.")
    return 0
