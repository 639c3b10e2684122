"""`attention-course jupyterhub`: a JupyterHub for the course."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from attention_course.cli.common import (
    course_root,
)
from attention_course.cli.options import (
    add_course_option,
    positive,
)
from attention_course.errors import UserError
from attention_course.settings import HUB, HUB_CHECK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "jupyterhub",
        help="write a JupyterHub for the course (local accounts, exchange, formgrader)",
        description="Install this package (from its wheel) and JupyterHub into one environment "
        "every account can run, and write into OUT the hub's jupyterhub_config.py (local "
        "accounts through PAM, each user's JupyterLab run as their account, behind "
        "configurable-http-proxy), the students' Jupyter configuration (Assignments and "
        "Validate, no instructor tools) and the instructor's (the course, formgrader); make "
        "nbgrader's exchange, shared by everybody. Run it and the hub as root.",
    )
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="where to write the hub")
    p.add_argument(
        "--venv",
        type=Path,
        required=True,
        metavar="DIR",
        help="the environment of the hub and every user's server (made if missing)",
    )
    p.add_argument("--instructor", required=True, metavar="NAME", help="the instructor's account")
    p.add_argument(
        "--students",
        default="",
        metavar="NAME,NAME",
        help="the students' accounts (needed without --lti; with it, made at each first launch)",
    )
    p.add_argument(
        "--exchange",
        type=Path,
        required=True,
        metavar="DIR",
        help="nbgrader's exchange, a folder outside the course (made, writable by everybody)",
    )
    p.add_argument("--ip", default=HUB.ip, help=f"the hub's address (default: {HUB.ip})")
    p.add_argument("--port", type=positive, default=HUB.port, help="its port")
    p.add_argument("--hub-port", type=positive, default=HUB.hub_port, help="the hub API's port")
    p.add_argument(
        "--proxy-api-port", type=positive, default=HUB.proxy_api_port, help="the proxy API's port"
    )
    p.add_argument(
        "--proxy",
        default=HUB.proxy,
        metavar="PROGRAM",
        help=f"configurable-http-proxy (default: {HUB.proxy} on PATH)",
    )
    p.add_argument(
        "--checks",
        action="store_true",
        help="also run the course's grading service: students check notebooks with the hidden "
        "graders before the deadline (JupyterLab's \"Check with the course's graders\"; its "
        "limits are course.toml's [hub_check])",
    )
    p.add_argument(
        "--checks-port",
        type=positive,
        default=HUB_CHECK.port,
        metavar="PORT",
        help=f"with --checks: the grading service's port on 127.0.0.1 (default: {HUB_CHECK.port})",
    )
    p.add_argument(
        "--lti",
        action="store_true",
        help="users launch the hub from the course's LMS (LTI 1.3, the platform in course.toml's "
        "[lms]) instead of logging in with local passwords; installs the lti extra",
    )
    p.add_argument("--python", metavar="PYTHON", help="the Python of a new environment")
    add_course_option(p, "the course the hub serves (its instructor's own folder)")
    p.set_defaults(run=jupyterhub)


def jupyterhub(args: argparse.Namespace) -> int:
    from attention_course.integrations import jupyterhub as hub

    students = tuple(name.strip() for name in args.students.split(",") if name.strip())
    plan = hub.HubPlan(
        course=course_root(args),
        out=args.out.absolute(),
        venv=args.venv.absolute(),
        instructor=args.instructor,
        students=students,
        exchange=args.exchange.absolute(),
        ip=args.ip,
        port=args.port,
        hub_port=args.hub_port,
        proxy_api_port=args.proxy_api_port,
        proxy=args.proxy,
        checks_port=args.checks_port if args.checks else None,
        lti=args.lti,
    )
    hub.check_plan(plan)
    plan = dataclasses.replace(plan, proxy=hub.which_proxy(args.proxy))
    if args.out.exists() and not args.out.is_dir():
        raise UserError(f"{args.out}: exists and is not a folder")
    print(f"installing this package and JupyterHub into {plan.venv} ...", flush=True)
    hub.install_environment(plan.venv, args.python, lti=plan.lti)
    plan = dataclasses.replace(plan, proxy=hub.install_proxy(plan.proxy, plan.venv))
    try:
        files = hub.write_hub(plan)
    except OSError as exc:
        raise UserError(f"{exc.filename}: cannot write ({exc.strerror})") from None
    for path in files:
        print(f"wrote {path}")
    print(f"Start the hub (as root): {hub.hub_command(plan)}")
    if plan.lti:
        print(
            f"Then launch it from the LMS: its login URL is {plan.url}/hub/lti13/oauth_login, "
            f"its redirect URL {plan.url}/hub/lti13/oauth_callback, its keys "
            f"{plan.url}/hub/lti13/jwks (docs/instructors.md, 'The LMS')"
        )
    else:
        print(f"Then log in at {plan.url}/")
    return 0
