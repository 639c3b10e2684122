"""`attention-course similarity`: which students share their code."""

from __future__ import annotations

import argparse
from pathlib import Path

from attention_course.cli.common import (
    known,
    the_course,
)
from attention_course.cli.options import (
    add_assignment,
    add_course_option,
    fraction,
)
from attention_course.errors import UserError
from attention_course.settings import SIMILARITY


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "similarity",
        help="which students share their code: pairs and groups, side by side",
        description="Compare every pair of submissions in submitted/*/ASSIGNMENT/ over all "
        "their functions (the solution cells, read, never run), after taking away what the "
        "release gave (stub, docstrings, visible checks), what the known sources hold (the "
        "course's own, course.toml's [similarity] base, and --base), and what copying "
        "disguises (names, formatting, comments, statement order, helpers, equivalent numpy "
        "calls, temporaries, constants, dead code and asserts). Code many students wrote "
        "alike counts less; students who hand in the same code count once, so a group of "
        "copies of any size is reported as one. Writes similarity.md, similarity.html (per "
        "pair of students, their cells side by side, offline) and similarity.csv; nothing is "
        "sent anywhere. Unreadable notebooks are named in the report.",
    )
    add_assignment(p, "a graded assignment (not the quiz)")
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="folder for the files (default: DIR/reports/ASSIGNMENT/)",
    )
    p.add_argument(
        "--threshold",
        type=fraction,
        metavar="X",
        default=SIMILARITY.threshold,
        help=f"report pairs scoring at least this, 0 to 1 (default: {SIMILARITY.threshold:g})",
    )
    p.add_argument(
        "--base",
        type=Path,
        nargs="+",
        action="extend",
        default=[],
        metavar="PATH",
        help="known sources students may share code from (last year's solutions, a public "
        "repository): .py files, notebooks, or folders of them; their code counts as common "
        "and is shown as from them",
    )
    p.add_argument(
        "--no-course-base",
        action="store_true",
        help="leave out the course's own known sources (course.toml's [similarity] base, "
        "such as the course text), to see who handed in their code",
    )
    add_course_option(p)
    p.set_defaults(run=similarity)


def similarity(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from attention_course.cli.progress import Progress
    from attention_course.grading.notebook import NotebookError
    from attention_course.settings import SIMILARITY
    from attention_course.similarity.compare import compare_class
    from attention_course.similarity.extract import submitted
    from attention_course.similarity.report import write_report

    course = the_course(args)
    if args.assignment == course.quiz_assignment:
        raise UserError(f"{args.assignment} is the graded quiz: it has no code to compare")
    known(course, args.assignment)
    students = submitted(course.root, args.assignment)
    if len(students) < 2:
        raise UserError(
            f"{len(students)} submission(s) in {course.root / 'submitted'}/*/{args.assignment}/: "
            "nothing to compare"
        )
    bar = Progress(len(students), "submissions read")
    bar.started()
    settings = replace(SIMILARITY, threshold=args.threshold)
    try:
        found = compare_class(
            args.assignment,
            course.root,
            bar.update,
            settings,
            base=args.base,
            course_base=not args.no_course_base,
        )
        written = write_report(found, args.out or course.root / "reports" / args.assignment)
    except NotebookError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the report: {exc.strerror or exc}") from None
    print(f"known sources: the release, {', '.join(found.known) or 'no other'}")
    print(f"{len(found.pairs)} pair(s) of students reported, most similar first:")
    for p in found.pairs[:10]:
        same = [m.function for m in p.matches if m.identical]
        note = f"  identical: {', '.join(same)}" if same else ""
        print(f"  {p.score:.2f}  {p.a}  {p.b}{note}")
    for i, g in enumerate(found.groups, start=1):
        if len(g.members) > 2:
            print(f"group {i}: {len(g.members)} students: {', '.join(g.members)}")
    for student, why in sorted(found.unreadable.items()):
        print(f"not compared: {student}: {why}")
    print("Wrote " + ", ".join(str(p) for p in written))
    return 0
