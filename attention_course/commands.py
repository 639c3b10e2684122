"""The subcommands of `attention-course` (release, check, autograde, scores, report, gradescope,
doctor, demo, student-config)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from attention_course.assignments import ASSIGNMENTS, COURSE_ROOT, grade_cell_id
from attention_course.course import DEFAULT_JOBS
from attention_course.errors import SandboxUnavailable, UserError
from quiz.defaults import GRADED_ASSIGNMENT as QUIZ_ASSIGNMENT


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "release",
        help="regenerate release/ from source/ with nbgrader",
        description="Regenerate release/<assignment>/ from source/ (solutions "
        "and hidden tests stripped). Commit the result.",
    )
    p.add_argument(
        "assignments",
        nargs="*",
        metavar="ASSIGNMENT",
        help="assignments to release (default: every one in source/)",
    )
    p.set_defaults(run=run_release)

    p = sub.add_parser(
        "check",
        help="grade one filled-in notebook, no gradebook needed",
        description="Grade a notebook with the hidden graders and print a "
        "per-function table (or Gradescope's results.json with --json).",
    )
    p.add_argument("notebook", type=Path, metavar="NOTEBOOK", help="the .ipynb to grade")
    p.add_argument(
        "--assignment",
        choices=sorted(ASSIGNMENTS),
        help="assignment to grade against (default: from the notebook's metadata, "
        "its test cells, or its file name)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print Gradescope's results.json format instead of a table",
    )
    p.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade even where no sandbox can be made (student code then runs with limits "
        "only, as your own user); every result says UNSANDBOXED",
    )
    p.set_defaults(run=run_check)

    p = sub.add_parser(
        "autograde",
        help="nbgrader autograde submitted/ into the gradebook",
        description="Autograde submitted/<student>/<assignment>/ with nbgrader "
        "(graders run outside the kernel) and print the stored scores.",
    )
    p.add_argument("assignment", choices=sorted(ASSIGNMENTS))
    p.add_argument("--student", help="one student id (default: every submitted student)")
    p.add_argument(
        "--jobs",
        type=int,
        default=DEFAULT_JOBS,
        help=f"submissions graded side by side (default: {DEFAULT_JOBS}, the cores)",
    )
    p.set_defaults(run=run_autograde)

    p.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade even where no sandbox can be made (student code then runs with limits "
        "only, as your own user); every student's feedback says UNSANDBOXED",
    )

    p = sub.add_parser("scores", help="print the gradebook's scores for an assignment")
    p.add_argument("assignment", choices=sorted(ASSIGNMENTS))
    p.set_defaults(run=run_scores)

    p = sub.add_parser(
        "doctor",
        help="check that student code is contained on this machine",
        description="Start a sandbox exactly as grading does and try, from inside, what a "
        "hostile student would (read the course, reach the network, gain privileges, write "
        "outside /tmp); print every guarantee and whether it holds. Exit 0 when all hold.",
    )
    p.set_defaults(run=run_doctor)

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
    choices = sorted([*ASSIGNMENTS, QUIZ_ASSIGNMENT])
    p.add_argument(
        "assignment",
        choices=choices,
        metavar="ASSIGNMENT",
        help=f"one of: {', '.join(choices)} (the graded quiz)",
    )
    p.add_argument(
        "--course",
        type=Path,
        default=COURSE_ROOT,
        metavar="DIR",
        help="the course folder (default: this repository)",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="folder for the files (default: DIR/reports/ASSIGNMENT/)",
    )
    p.set_defaults(run=run_report)

    p = sub.add_parser(
        "gradescope",
        help="build a Gradescope autograder zip for an assignment",
        description="Build a Gradescope autograder (setup.sh, run_autograder, the graders, the "
        "reference and this package) that grades a submitted notebook with the same graders "
        "and sandbox as `check` and always writes results.json. Upload the zip as the "
        "autograder of a Gradescope programming assignment.",
    )
    p.add_argument(
        "assignment",
        choices=sorted(ASSIGNMENTS),
        metavar="ASSIGNMENT",
        help=f"one of: {', '.join(sorted(ASSIGNMENTS))}",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="ZIP",
        help="the zip to write (default: gradescope-ASSIGNMENT.zip in the current folder)",
    )
    p.add_argument(
        "--course",
        type=Path,
        default=COURSE_ROOT,
        metavar="DIR",
        help="the course folder whose graders go in (default: this repository)",
    )
    p.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade even where Gradescope's machine cannot make a sandbox (student code then "
        "runs with limits only); every result says UNSANDBOXED",
    )
    p.set_defaults(run=run_gradescope)

    p = sub.add_parser(
        "demo",
        help="release, grade a sample class and print its scores",
        description="Release both assignments, create sample submissions "
        "(instructor solution, a partly correct student, an untouched stub, a "
        "hostile one), autograde them into the gradebook, write feedback and "
        "print a per-student, per-function table.",
    )
    p.set_defaults(run=run_demo)

    p = sub.add_parser(
        "student-config",
        help="write the students' Jupyter configuration (no instructor tools)",
        description="Write a Jupyter configuration folder for students: JupyterLab started "
        "with JUPYTER_CONFIG_DIR=FOLDER shows the Assignments tab and the Validate button "
        "(which answers with the failing check first), not formgrader, Create Assignment or "
        "the course list; nbgrader finds the course's exchange.",
    )
    p.add_argument("folder", type=Path, metavar="FOLDER", help="the folder to write")
    p.add_argument("--course-id", help="nbgrader course id (default: nbgrader_config.py's)")
    p.add_argument(
        "--exchange", help="the exchange folder students use (default: nbgrader_config.py's)"
    )
    p.set_defaults(run=run_student_config)


def run_release(args: argparse.Namespace) -> int:
    from attention_course.course import CourseError, release

    try:
        names = release(args.assignments or None)
    except CourseError as exc:
        raise UserError(str(exc)) from None
    for name in names:
        print(f"released {name} -> release/{name}/")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from attention_course.grading import GradingError, grade_file
    from attention_course.notebook import NotebookError, detect_assignment, read_notebook
    from attention_course.report import function_table, gradescope_results

    path: Path = args.notebook
    try:
        if path.suffix != ".ipynb":
            raise NotebookError(f"{path}: expected a Jupyter notebook (.ipynb)")
        nb = read_notebook(path)
        assignment = args.assignment or detect_assignment(nb, path)
        report = grade_file(path, assignment, unsandboxed=args.unsandboxed)
    except (NotebookError, GradingError, SandboxUnavailable) as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps(gradescope_results(report), indent=2))
    else:
        print(function_table(report))
    return 0


def print_scores(assignment: str) -> None:
    from attention_course.course import gradebook_scores
    from attention_course.report import class_table

    columns = [grade_cell_id(f) for f in ASSIGNMENTS[assignment].graded]
    print(class_table(gradebook_scores(assignment), columns, f"{assignment} (gradebook)"))


def run_autograde(args: argparse.Namespace) -> int:
    from attention_course.course import autograde_many, failure_reason, submitted_students

    found = submitted_students(args.assignment)
    if args.student and args.student not in found:
        raise UserError(f"no submission in submitted/{args.student}/{args.assignment}/")
    students = [args.student] if args.student else found
    if not students:
        raise UserError(f"no submissions in submitted/*/{args.assignment}/")
    results = autograde_many(
        args.assignment, students, jobs=args.jobs, unsandboxed=args.unsandboxed
    )
    print_scores(args.assignment)
    failed = {s: r for s, r in results.items() if not r.get("success")}
    for student, result in sorted(failed.items()):
        print(f"  {student}: {failure_reason(result)}")
    return 1 if failed else 0


def run_doctor(args: argparse.Namespace) -> int:
    from attention_course.assignments import COURSE_ROOT
    from attention_course.doctor import diagnose

    try:
        checks = diagnose(COURSE_ROOT)
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


def run_scores(args: argparse.Namespace) -> int:
    print_scores(args.assignment)
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from attention_course.demo import run_demo as demo

    try:
        return demo()
    except SandboxUnavailable as exc:
        raise UserError(str(exc)) from None


def run_report(args: argparse.Namespace) -> int:
    from attention_course.class_report import ReportError, class_report
    from attention_course.report_files import to_markdown, write_report

    course = args.course.resolve()
    out = args.out or course / "reports" / args.assignment
    try:
        report = class_report(args.assignment, course)
        written = write_report(report, out)
    except ReportError as exc:
        raise UserError(str(exc)) from None
    print(to_markdown(report))
    print("Wrote " + ", ".join(str(p) for p in written))
    return 0


def run_gradescope(args: argparse.Namespace) -> int:
    from attention_course.gradescope import AutograderError, build_autograder

    out = args.out or Path(f"gradescope-{args.assignment}.zip")
    try:
        names = build_autograder(args.assignment, out, args.course.resolve(), args.unsandboxed)
    except AutograderError as exc:
        raise UserError(str(exc)) from None
    print(f"Wrote {out} ({len(names)} files): upload it as the autograder of a Gradescope")
    print(f"programming assignment; students submit {args.assignment}.ipynb.")


def run_student_config(args: argparse.Namespace) -> int:
    from attention_course.student_config import write_student_config

    if args.folder.exists() and not args.folder.is_dir():
        raise UserError(f"{args.folder}: exists and is not a folder")
    try:
        files = write_student_config(args.folder, args.course_id, args.exchange)
    except OSError as exc:
        raise UserError(f"{args.folder}: cannot write ({exc.strerror})") from None
    for path in files:
        print(f"wrote {path}")
    print(f"Students start JupyterLab with: JUPYTER_CONFIG_DIR={args.folder} jupyter lab")
    return 0
