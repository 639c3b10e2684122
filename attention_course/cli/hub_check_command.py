"""`attention-course hub-check`: a student checks a notebook with the course's graders through
the hub (its grading service: hub-check-service)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attention_course.cli.options import positive
from attention_course.errors import UserError
from attention_course.settings import CHECK_URL_ENV, HUB_CHECK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "hub-check",
        help="check a notebook with the course's hidden graders (on JupyterHub)",
        description="Send a notebook to the course's grading service on JupyterHub, graded "
        "by the same graders and sandbox as the final grade, and print its PASS/FAIL lines "
        "and hints. The hub token of your server says who you are; checks are limited per "
        "assignment per day, and the answer says when the next is allowed.",
    )
    p.add_argument("notebook", type=Path, metavar="NOTEBOOK", help="the notebook to check")
    p.add_argument("--assignment", help="its assignment (default: found from the notebook)")
    p.add_argument("--url", help=f"the service's address (default: ${CHECK_URL_ENV})")
    p.add_argument(
        "--wait",
        type=positive,
        default=int(HUB_CHECK.wait),
        metavar="SECONDS",
        help=f"how long to wait for the answer (default: {HUB_CHECK.wait:g})",
    )
    p.set_defaults(run=hub_check)


def hub_check(args: argparse.Namespace) -> int:
    from attention_course.inert import terminal_text
    from attention_course.integrations.check_client import ServiceError, check, where

    try:
        notebook = args.notebook.read_bytes()
    except OSError as exc:
        raise UserError(f"{args.notebook}: cannot be read ({exc.strerror})") from None
    try:
        url, token = where(args.url)
        found = check(notebook, args.assignment, url, token, args.wait)
    except ServiceError as exc:
        print(f"not checked: {terminal_text(exc)}", file=sys.stderr)
        return 1
    record = found["check"]
    if record["state"] in ("queued", "running"):
        print(
            f"not answered within {args.wait} s: check {record['id']} is {record['state']}; "
            "its answer stays with the service",
            file=sys.stderr,
        )
        return 1
    print(terminal_text(record.get("feedback") or ""), end="")
    if record["state"] == "graded":
        left = found.get("checks_left")
        if left is not None:
            print(f"checks of {record['assignment']} left today: {left}")
        return 0
    return 1
