"""`attention-course hub-check` (a student checks a notebook with the course's graders through
the hub), `hub-check-service` (the service the hub runs) and `hub-checks` (the instructor's
list of every check)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attention_course.cli.options import add_course_option, positive
from attention_course.errors import UserError
from attention_course.settings import AFTER_DUE, CHECK_URL_ENV, HUB_CHECK


def add_parsers(sub: argparse._SubParsersAction) -> None:
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

    p = sub.add_parser(
        "hub-check-service",
        help="the grading service JupyterHub runs (c.JupyterHub.services)",
        description="Serve students' checks with the hidden graders, as a JupyterHub service "
        "(the hub starts it and sets $JUPYTERHUB_SERVICE_URL, _PREFIX and its token). Options "
        "win over course.toml's [hub_check] table, which wins over the defaults.",
    )
    add_course_option(p)
    p.add_argument("--db", metavar="URL", help="the gradebook (default: the class run's)")
    p.add_argument(
        "--config-lines",
        action="store_true",
        help="print the lines that run this service, with these options, to append to the "
        "jupyterhub_config.py `attention-course jupyterhub` wrote (its course and instructor)",
    )
    p.add_argument(
        "--port",
        type=positive,
        default=HUB_CHECK.port,
        help=f"with --config-lines: the service's port on 127.0.0.1 (default: {HUB_CHECK.port})",
    )
    p.add_argument(
        "--per-day",
        type=positive,
        help=f"checks per student per assignment per window (default: {HUB_CHECK.per_day})",
    )
    p.add_argument(
        "--window",
        type=positive,
        metavar="SECONDS",
        help=f"how long a check counts (default: {HUB_CHECK.window:g})",
    )
    p.add_argument(
        "--workers", type=positive, help=f"checks graded at once (default: {HUB_CHECK.workers})"
    )
    p.add_argument(
        "--after-due",
        choices=AFTER_DUE,
        help=f"after the due date: no checks, or late ones (default: {HUB_CHECK.after_due})",
    )
    p.add_argument(
        "--instructors",
        default="",
        metavar="NAMES",
        help="hub users (comma-separated) who see every check",
    )
    p.add_argument(
        "--instructor-group",
        default="instructors",
        metavar="GROUP",
        help="the hub group whose members see every check (default: instructors)",
    )
    p.set_defaults(run=hub_check_service)

    p = sub.add_parser(
        "hub-checks",
        help="list the students' checks with the course's graders (instructors)",
        description="Every check students asked of the grading service, oldest first: who, "
        "when, the assignment, the score and the outcome, from the gradebook database.",
    )
    add_course_option(p)
    p.add_argument("--db", metavar="URL", help="the gradebook (default: the class run's)")
    p.add_argument("--assignment", help="only this assignment's checks")
    p.add_argument("--student", help="only this student's checks")
    p.add_argument("--json", action="store_true", help="print JSON, one object per check")
    p.set_defaults(run=hub_checks)


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


def _records(args: argparse.Namespace):
    from attention_course.classgrade.nbgrader_api import open_gradebook
    from attention_course.cli.handlers import _course, _gradebook
    from attention_course.integrations.check_limits import CheckRecords

    root = _course(argparse.Namespace(course=args.course))
    url = _gradebook(root, args.db)
    open_gradebook(root)  # nbgrader's tables first: it stamps only an empty database
    return root, CheckRecords(url)


def hub_check_service(args: argparse.Namespace) -> int:
    import logging

    from attention_course.classgrade.nbgrader_api import due_date, late_penalty
    from attention_course.course import Course
    from attention_course.integrations.check_limits import policy
    from attention_course.integrations.hub_check import CheckService, serve

    if args.config_lines:
        print(_config_lines(args))
        return 0
    logging.basicConfig(level=logging.INFO, format="[hub-check %(levelname)s] %(message)s")
    root, records = _records(args)
    settings = policy(
        root,
        per_day=args.per_day,
        window=args.window,
        workers=args.workers,
        after_due=args.after_due,
    )
    service = CheckService(
        Course.load(root),
        records,
        settings,
        lambda assignment, student: due_date(assignment, root, student),
        late_penalty(root),
        frozenset(n for n in args.instructors.split(",") if n),
        args.instructor_group,
    )
    serve(service)
    return 0


def _config_lines(args: argparse.Namespace) -> str:
    from attention_course.integrations.hub_check import hub_config_lines

    options: list[str] = []
    for name in ("per_day", "window", "workers", "after_due"):
        value = getattr(args, name)
        if value is not None:
            options += ["--" + name.replace("_", "-"), str(value)]
    program = Path(sys.executable).with_name("attention-course")
    return "\n".join(["", *hub_config_lines(program, args.port, tuple(options))])


def hub_checks(args: argparse.Namespace) -> int:
    from attention_course.integrations.check_limits import readable

    _, records = _records(args)
    found = records.list(args.student, args.assignment)
    if args.json:
        for record in found:
            print(json.dumps(record.for_instructor()))
        return 0
    if not found:
        print("no checks yet")
        return 0
    print(f"{'when':<24} {'student':<16} {'assignment':<20} {'outcome':<9} score")
    for r in found:
        score = "" if r.score is None else f"{r.score:g} / {r.max_score:g}"
        late = " (late)" if r.late else ""
        print(
            f"{readable(r.requested):<24} {r.student:<16} {r.assignment:<20} "
            f"{r.state:<9} {score}{late}"
        )
    return 0
