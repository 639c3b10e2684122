"""`attention-course lms`: the course's grades to its LMS (LTI Advantage, or a CSV its
gradebook imports), and the tool's key (integrations/lms/)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attention_course.cli.lms_push import needs_extra
from attention_course.cli.options import add_course_option
from attention_course.errors import UserError
from attention_course.settings import COURSE_FILE, LMS, LMS_FORMATS


def add_parser(sub: argparse._SubParsersAction) -> None:
    lms = sub.add_parser(
        "lms",
        help="send grades to the LMS (LTI 1.3 grade service, or a CSV its gradebook imports)",
        description="The course's LMS (Canvas, Moodle): its platform is course.toml's [lms]. "
        "Students launch the hub from it (attention-course jupyterhub --lti); grades go back "
        "with `push` (LTI Advantage), or as a CSV its gradebook imports (`csv`).",
    )
    steps = lms.add_subparsers(dest="lms_command", required=True, metavar="STEP")

    p = steps.add_parser(
        "keys",
        help="make the tool's key pair and print the public key the LMS registers",
        description="Make the tool's private key (RSA, in the course's lms/ folder, mode 0600; "
        "kept if it exists) and print its public key, as a JWK and PEM, for the LMS's "
        "registration of the tool (or give the LMS the hub's /hub/lti13/jwks address).",
    )
    p.add_argument("--new", action="store_true", help="replace the key with a new one")
    add_course_option(p)
    p.set_defaults(run=keys)

    p = steps.add_parser(
        "push",
        help="post the assignment's scores to the LMS's gradebook (LTI Advantage AGS)",
        description="Post each submitted student's score of ASSIGNMENT to the LMS's gradebook "
        "through LTI Advantage's Assignment and Grade Services: nbgrader's score less its late "
        "penalty (once), out of the assignment's maximum; a submission not graded yet, or whose "
        "grading failed, as Pending with no number. Only what changed since the last push is "
        "sent. Score and progress only: no feedback text.",
    )
    p.add_argument(
        "assignments", nargs="*", metavar="ASSIGNMENT", help="assignments (default: every one)"
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be sent, send nothing")
    p.add_argument("--db", metavar="URL", help="the gradebook (default: the course's)")
    add_course_option(p)
    p.set_defaults(run=push)

    p = steps.add_parser(
        "csv",
        help="write the scores as a CSV that Canvas's or Moodle's gradebook imports",
        description="Write the scores of the assignments (default: every one) as a CSV in the "
        "import format of Canvas's or Moodle's gradebook, each student with their LMS ids "
        "(from --roster, else the hub's launches, else the nbgrader id as their login). No "
        "score yet is an empty cell (Canvas) or '-' (Moodle), never a 0.",
    )
    p.add_argument("assignments", nargs="*", metavar="ASSIGNMENT", help="assignments")
    p.add_argument(
        "--format", choices=LMS_FORMATS, help="the LMS (default: course.toml's [lms] format)"
    )
    p.add_argument(
        "--moodle-id",
        default="username",
        help="Moodle: the identity column (userid, username, useridnumber, useremail; "
        "default: username): choose the same under 'Map to' when importing",
    )
    p.add_argument(
        "--roster",
        type=Path,
        metavar="CSV",
        help="the LMS's own gradebook or participants export, for the students' LMS ids",
    )
    p.add_argument("--match", metavar="COLUMN", help="the roster's column of nbgrader ids")
    p.add_argument("--out", type=Path, metavar="FILE", help="the file (default: print it)")
    p.add_argument("--db", metavar="URL", help="the gradebook (default: the course's)")
    add_course_option(p)
    p.set_defaults(run=csv_export)

    p = steps.add_parser(
        "launches",
        help="list who launched the hub from the LMS: student id, LMS user, role",
        description="The users the hub recorded at their launches: their nbgrader student id, "
        "their LMS user id (the launch's sub) and LMS ids, their role and last launch.",
    )
    add_course_option(p)
    p.set_defaults(run=launches)


def _course(args: argparse.Namespace):
    from attention_course.cli.common import course_root as course_folder
    from attention_course.course import Course

    root = course_folder(args)
    return Course.load(root)


def _assignments(course, names: list[str]) -> list[str]:
    for name in names:
        if name not in course.all_assignments:
            known = ", ".join(course.all_assignments)
            raise UserError(f"unknown assignment {name!r} (known: {known})")
    return names or list(course.all_assignments)


def keys(args: argparse.Namespace) -> int:
    import json

    from attention_course.integrations.lms import config
    from attention_course.integrations.lms import keys as tool_keys

    needs_extra()
    course = _course(args)
    found = config.load(course.root)
    settings = found.settings if found else LMS
    path, made = tool_keys.make_key(course.root, settings, replace=args.new)
    private = tool_keys.read_private(course.root, settings)
    print(f"{'made' if made else 'kept'} the tool's private key {path} (mode 600)")
    print("Its public key, for the LMS's registration of the tool:")
    print(json.dumps(tool_keys.public_jwk(private), indent=2))
    print(tool_keys.public_pem(private), end="")
    return 0


def push(args: argparse.Namespace) -> int:
    course = _course(argparse.Namespace(course=args.course, db=args.db))
    names = _assignments(course, args.assignments)
    from attention_course.cli.lms_push import push_assignments

    return 0 if push_assignments(course.root, names, args.dry_run) else 1


def csv_export(args: argparse.Namespace) -> int:
    from attention_course.integrations.lms import config, csv_export
    from attention_course.integrations.lms.scores import assignment_grades

    course = _course(argparse.Namespace(course=args.course, db=args.db))
    found = config.load(course.root)
    fmt = args.format or (found.format if found else "")
    if not fmt:
        raise UserError(f"--format canvas or moodle (or [lms] format in {COURSE_FILE})")
    roster = csv_export.read_roster(args.roster, args.match) if args.roster else None
    names = _assignments(course, args.assignments)
    sets, skipped = [], []
    for name in names:
        try:
            sets.append(assignment_grades(name, course.root))
        except UserError as exc:
            if args.assignments:  # named: it must be there
                raise
            skipped.append(f"{name} left out: {exc}")
    if not sets:
        raise UserError("no assignment has grades yet: " + "; ".join(skipped))
    students = sorted({g.student for s in sets for g in s.grades})
    settings = found.settings if found else LMS
    who, notes = csv_export.people(course.root, students, roster, settings)
    notes += skipped
    if fmt == "canvas":
        result = csv_export.canvas(sets, who)
    else:
        result = csv_export.moodle(sets, who, args.moodle_id)
    if args.out:
        try:
            args.out.write_text(result.text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"{args.out}: cannot write ({exc.strerror})") from None
    else:
        sys.stdout.write(result.text)
    for line in notes + result.left_out:
        print(f"note: {line}", file=sys.stderr)
    where = f" to {args.out}" if args.out else ""
    print(f"{result.students} students' scores{where} ({fmt})", file=sys.stderr)
    return 0


def launches(args: argparse.Namespace) -> int:
    import datetime

    from attention_course.integrations.lms import config, files

    course = _course(argparse.Namespace(course=args.course))
    found = config.load(course.root)
    book = files.launches(course.root, found.settings if found else LMS)
    users = book.get("users", {})
    if not users:
        print("no launches yet")
        return 0
    print(f"{'student id':<24} {'role':<11} {'last launch (UTC)':<20} LMS user (sub)")
    for sub, user in sorted(users.items(), key=lambda kv: kv[1].get("student_id") or ""):
        when = datetime.datetime.fromtimestamp(user.get("last_launch", 0), datetime.UTC)
        role = "instructor" if user.get("instructor") else "student"
        print(f"{user.get('student_id') or '-':<24} {role:<11} {when:%Y-%m-%d %H:%M:%S}  {sub}")
    return 0
