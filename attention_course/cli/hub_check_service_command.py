"""`attention-course hub-check-service`: the course's grading service that JupyterHub runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attention_course.cli.common import check_records
from attention_course.cli.options import add_course_option, positive
from attention_course.settings import AFTER_DUE, HUB_CHECK


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    root, records = check_records(args)
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
