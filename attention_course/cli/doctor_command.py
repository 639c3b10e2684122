"""`attention-course doctor`: is student code contained on this machine?"""

from __future__ import annotations

import argparse

from attention_course.cli.common import (
    the_course,
)
from attention_course.cli.options import (
    add_course_option,
)
from attention_course.errors import SandboxUnavailable, UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check that student code is contained on this machine",
        description="Start a sandbox exactly as grading does and try, from inside, what a "
        "hostile student would (read the course, reach the network, gain privileges, write "
        "outside /tmp); print every guarantee and whether it holds. Exit 0 when all hold.",
    )
    add_course_option(p, "the course folder that must stay hidden")
    p.set_defaults(run=doctor)


def doctor(args: argparse.Namespace) -> int:
    from attention_course.sandbox.doctor import diagnose

    try:
        checks = diagnose(the_course(args).root)
    except SandboxUnavailable as exc:
        raise UserError(str(exc)) from None
    width = max(len(c.name) for c in checks)
    print("Is student code contained on this machine? Tried from inside a sandbox:")
    for c in checks:
        print(f"  {'ok ' if c.ok else 'NO '} {c.name:<{width}}  {c.detail}")
    failed = [c.name for c in checks if not c.ok]
    if failed:
        print(f"NOT contained: {', '.join(failed)}. Do not grade untrusted code here.")
        return 1
    print("Every guarantee holds: student code is contained here.")
    return 0
