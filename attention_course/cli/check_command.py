"""`attention-course check`: grade one filled-in notebook, no gradebook needed."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attention_course.cli.common import (
    known,
    the_course,
)
from attention_course.cli.options import (
    add_course_option,
    add_unsandboxed,
)
from attention_course.errors import SandboxUnavailable, UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="grade one filled-in notebook, no gradebook needed",
        description="Grade a notebook with the hidden graders (the graded quiz with its key) "
        "and print a per-function table, or Gradescope's results.json with --json. The "
        "assignment is the one the notebook's cells belong to.",
    )
    p.add_argument("notebook", type=Path, metavar="NOTEBOOK", help="the .ipynb to grade")
    p.add_argument(
        "--assignment",
        help="assignment to grade against (default: the one the notebook's cells belong to, "
        "else its metadata, its file name or the functions it defines)",
    )
    p.add_argument(
        "--student",
        default="",
        help="the student's id, for the graded quiz (its numbers depend on the student)",
    )
    p.add_argument(
        "--json", action="store_true", help="print Gradescope's results.json instead of a table"
    )
    p.add_argument(
        "--seed",
        metavar="FILE",
        help="grade with the graders' inputs of the seed in FILE (mode 0600), or on stdin with "
        "`-` (32 hex digits, as recorded in .grading/seeds/ by autograde; never on the command "
        "line, which every account sees), to reproduce a grade; default: the notebook's own, "
        "from the course's grading key",
    )
    add_unsandboxed(p)
    add_course_option(
        p,
        "the course whose graders grade it (and whose source notebooks the quiz's locked cells "
        "come from)",
    )
    p.set_defaults(run=check)


def check(args: argparse.Namespace) -> int:
    from attention_course.grading.notebook import NotebookError, detect_assignment, read_notebook
    from attention_course.sandbox import confined

    path: Path = args.notebook
    course = the_course(args)
    if args.assignment:
        known(course, args.assignment)
    seed = _seed(args.seed)
    try:
        if path.suffix != ".ipynb":
            raise NotebookError(f"{path}: expected a Jupyter notebook (.ipynb)")
        nb = read_notebook(path)
        assignment = args.assignment or detect_assignment(nb, path, course)
    except NotebookError as exc:
        raise UserError(str(exc)) from None
    if assignment != course.quiz_assignment:  # (the quiz runs no student code)
        confined.probe_soon()  # a sandbox starts and stops while the graders and numpy are imported
    from attention_course.grading.graders import GradingError, grade_file, limit_grader_memory
    from attention_course.grading.quizcheck import check_quiz
    from attention_course.reports.tables import function_table, gradescope_results

    try:
        if assignment == course.quiz_assignment:
            report = check_quiz(path, args.student, course.root)
        else:
            limit_grader_memory()
            report = grade_file(
                path,
                assignment,
                unsandboxed=args.unsandboxed,
                in_process=True,
                course=course,
                seed=seed,
            )
    except (NotebookError, GradingError, SandboxUnavailable) as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps(gradescope_results(report), indent=2))
    else:
        print(function_table(report))
    return 0


def _seed(given: str | None) -> str | None:
    """The seed `--seed` gives: read from stdin (`-`) or from a file only this account can
    read, never the seed itself on the command line (every account on the machine reads a
    process's command line: `ps`)."""
    import stat

    from attention_course.grading.seeds import check_seed

    if given is None:
        return None
    if given == "-":
        text = sys.stdin.readline().strip()
    else:
        path = Path(given)
        try:
            info = path.stat()
        except FileNotFoundError:
            if given and all(c in "0123456789abcdefABCDEF" for c in given):
                raise UserError(
                    "--seed: a seed on the command line is shown to every account (ps): give "
                    "it on stdin (--seed -) or in a file of mode 0600 (--seed FILE)"
                ) from None
            raise UserError(f"--seed: {given}: no such file") from None
        except OSError as exc:
            raise UserError(f"--seed: {given}: cannot be read ({exc.strerror})") from None
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise UserError(f"--seed: {given}: other accounts may read it (chmod 600 {given})")
        try:
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"--seed: {given}: cannot be read ({type(exc).__name__})") from None
    try:
        return check_seed(text)
    except ValueError as exc:
        raise UserError(f"--seed: {exc}") from None
