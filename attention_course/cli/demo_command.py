"""`attention-course demo`: release, grade a sample class and print its scores (demo.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from attention_course.cli.common import (
    the_course,
)
from attention_course.cli.options import (
    add_course_option,
)
from attention_course.errors import SandboxUnavailable, UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="release, grade a sample class and print its scores",
        description="In a course folder of its own (never this repository's gradebook or "
        "student folders): release every assignment, write a sample class (instructor "
        "solution, a partly correct student, an untouched stub, a hostile one, a broken "
        "file), autograde it, write feedback and class reports, and print the scores.",
    )
    add_course_option(p, "the course to demonstrate")
    p.add_argument(
        "--into",
        type=Path,
        metavar="DIR",
        help="where to build the demo's copy of the course (default: a new temporary folder)",
    )
    p.set_defaults(run=demo)


def demo(args: argparse.Namespace) -> int:
    from attention_course.cli.demo import run_demo

    try:
        return run_demo(the_course(args), args.into)
    except (SandboxUnavailable, FileExistsError) as exc:
        raise UserError(str(exc)) from None
