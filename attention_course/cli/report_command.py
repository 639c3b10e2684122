"""`attention-course report`: the class report of an assignment, from the gradebook."""

from __future__ import annotations

import argparse
from pathlib import Path

from attention_course.cli.common import (
    course_root,
)
from attention_course.cli.options import (
    add_assignment,
    add_course_option,
    add_db,
)
from attention_course.errors import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="the class report: score spread, each function's mean, every test's pass rate",
        description="Read the gradebook (nothing is graded again) and write the class report "
        "of an assignment: the score distribution, each graded function's mean and spread, "
        "and every grader test's pass rate, most failed first, with what its failures said "
        "(the misconception the hint names). For the graded quiz: each question, and the "
        "quiz's item analysis. Writes report.md, scores.csv, pass_rates.csv and report.png, "
        "and prints the Markdown.",
    )
    add_assignment(p)
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="folder for the files (default: DIR/reports/ASSIGNMENT/)",
    )
    add_course_option(p)
    add_db(p)
    p.set_defaults(run=report)


def report(args: argparse.Namespace) -> int:
    from attention_course.reports.class_report import ReportError, class_report
    from attention_course.reports.files import to_markdown, write_report

    root = course_root(args)
    out = args.out or root / "reports" / args.assignment
    try:
        found = class_report(args.assignment, root)
        written = write_report(found, out)
    except ReportError as exc:
        raise UserError(str(exc)) from None
    print(to_markdown(found))
    print("Wrote " + ", ".join(str(p) for p in written))
    return 0
