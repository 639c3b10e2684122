"""`attention-course hub-checks`: the instructor's list of every check students asked."""

from __future__ import annotations

import argparse
import json

from attention_course.cli.common import check_records
from attention_course.cli.options import add_course_option


def add_parser(sub: argparse._SubParsersAction) -> None:
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


def hub_checks(args: argparse.Namespace) -> int:
    from attention_course.integrations.check_limits import readable

    _, records = check_records(args)
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
