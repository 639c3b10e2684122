"""What each subcommand of `attention-course` does: one library call, then printing."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from attention_course.course import Course, find_course
from attention_course.errors import GradebookUnavailable, SandboxUnavailable, UserError

if TYPE_CHECKING:
    from attention_course.classgrade.run import Pool

RERUN = "what was graded is kept; run the same command again to grade the rest"


def _the_course(args: argparse.Namespace) -> Course:
    """The course of this command: --course, else $ATTENTION_COURSE_DIR, else the folder
    holding course.toml at or above the current one (UserError when there is none)."""
    return find_course(args.course)


def _course(args: argparse.Namespace) -> Path:
    """The course folder of this command, checked to be an nbgrader course (and its
    gradebook to answer, for commands with --db)."""
    root = _the_course(args).root
    if not (root / "nbgrader_config.py").is_file():
        raise UserError(f"{root}: not a course folder (no nbgrader_config.py)")
    if "db" in args:
        _gradebook(root, args.db)
    return root


def _known(course: Course, assignment: str) -> str:
    names = course.all_assignments
    if assignment not in names:
        raise UserError(f"unknown assignment {assignment!r} (known: {', '.join(names)})")
    return assignment


def _gradebook(root: Path, db: str | None) -> str:
    """The gradebook this command uses (--db wins, for this command and every process it
    starts), checked to answer; a one-line error if it does not."""
    from attention_course.classgrade import gradebook
    from attention_course.classgrade.nbgrader_api import CourseError, gradebook_settings

    if db:
        os.environ[gradebook.DB_ENV] = gradebook.normalize(db)
    try:
        url, _ = gradebook_settings(root)
        gradebook.check(url)
    except (GradebookUnavailable, CourseError) as exc:
        raise UserError(str(exc)) from None
    return url


def release(args: argparse.Namespace) -> int:
    from attention_course.classgrade.nbgrader_api import CourseError
    from attention_course.classgrade.nbgrader_api import release as release_assignments

    root = _course(args)
    try:
        names = release_assignments(root, args.assignments or None)
    except CourseError as exc:
        raise UserError(str(exc)) from None
    for name in names:
        print(f"released {name} -> {root / 'release' / name}/")
    return 0


def check(args: argparse.Namespace) -> int:
    from attention_course.grading.notebook import NotebookError, detect_assignment, read_notebook
    from attention_course.sandbox import confined

    path: Path = args.notebook
    course = _the_course(args)
    if args.assignment:
        _known(course, args.assignment)
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


def print_scores(assignment: str, root: Path, reasons: bool = True) -> None:
    """The gradebook's scores of an assignment, those not reliable marked (with `reasons`,
    why, and why each submission not graded was not)."""
    from attention_course.classgrade.nbgrader_api import gradebook_records, gradebook_scores
    from attention_course.reports.tables import class_table, score_columns

    rows = gradebook_scores(assignment, root)
    records = gradebook_records(assignment, root)  # which scores are not reliable, and why
    columns = score_columns(assignment, root)
    print(class_table(rows, columns, f"{assignment} (gradebook)", records, reasons))


def autograde(args: argparse.Namespace) -> int:
    """Once the command's arguments are known good, the grading jobs of a local run are
    forked from this process (run.fork_jobs: it has opened nothing yet and runs no thread):
    their zygotes' start overlaps this process's reading of the course's configuration and
    its look at the submissions and the gradebook."""
    from attention_course.classgrade import gradebook
    from attention_course.classgrade.nbgrader_api import submitted_students
    from attention_course.classgrade.run import fork_jobs, job_count

    course = _the_course(args)
    root = course.root
    if not (root / "nbgrader_config.py").is_file():
        raise UserError(f"{root}: not a course folder (no nbgrader_config.py)")
    _known(course, args.assignment)
    found = submitted_students(args.assignment, root)
    for student in args.student or []:
        if student not in found:
            raise UserError(f"no submission in submitted/{student}/{args.assignment}/")
    if not found:
        raise UserError(f"no submissions in {root / 'submitted'}/*/{args.assignment}/")
    if args.db:  # the jobs started next grade into it too
        os.environ[gradebook.DB_ENV] = gradebook.normalize(args.db)
    local = args.scheduler is None
    count = job_count(args.jobs, len(args.student or found)) if local else 0
    pool = fork_jobs(root, args.assignment, count, args.unsandboxed)
    try:
        return _autograde(args, pool, args.student or found)
    finally:
        pool.close()


def _autograde(args: argparse.Namespace, pool: Pool, students: list[str]) -> int:
    from attention_course.classgrade.cluster import SchedulerLost
    from attention_course.classgrade.nbgrader_api import CourseError
    from attention_course.classgrade.outcomes import TRANSIENT, describe, of_exception, one_line
    from attention_course.classgrade.outcomes import retrying as steady
    from attention_course.classgrade.run import autograde_class
    from attention_course.cli.progress import Progress
    from attention_course.reports.tables import class_run_lines

    root = pool.root  # a course folder, checked by `autograde`
    url = _gradebook(root, args.db)
    bar: list[Progress] = []
    guard = threading.Lock()  # (a Dask run's events are told from its client's thread)

    def progress(kind: str, value, outcome) -> None:
        with guard:
            told(kind, value, outcome)

    def told(kind: str, value, outcome) -> None:
        if kind == "missing":  # graded before, not in this gradebook: restored, or new
            print(
                f"{args.assignment}: {len(value)} submissions graded before have no grade in "
                "this gradebook (restored from a backup, or a new one): grading them again",
                file=sys.stderr,
            )
            return
        if kind == "start":
            print(
                f"{args.assignment}: {value} of {len(students)} submissions to grade (the "
                "others are unchanged since they were last graded)",
                file=sys.stderr,
            )
            bar.append(Progress(value, "graded or not"))
            bar[0].started()
            return
        if kind in ("retry", "wait"):  # the infrastructure's: waited for, or tried again
            if bar:
                bar[0].note(f"  {value}: {outcome.reason}")
            else:  # (the run waits before it starts grading)
                print(f"  {value}: {outcome.reason}", file=sys.stderr, flush=True)
            return
        detail = f"{outcome.total:g} points" if outcome.total is not None else outcome.reason
        if outcome.total is not None and outcome.late_penalty:
            grade = max(0.0, outcome.total - outcome.late_penalty)
            detail = (
                f"{grade:g} points (late: {outcome.total:g} less nbgrader's late penalty "
                f"{outcome.late_penalty:g})"
            )
        if outcome.replaced is not None:
            detail += f"; its earlier score, {outcome.replaced:g}, is now 0"
        bar[0].update(value, outcome.status, detail)

    if args.scheduler not in (None, "local") and url.startswith("sqlite"):
        print(
            "note: the gradebook is a SQLite file; Dask workers on other machines need a "
            "PostgreSQL gradebook (--db)",
            file=sys.stderr,
        )
    try:
        run = autograde_class(
            args.assignment,
            root,
            students=args.student,
            jobs=args.jobs,
            force=args.force,
            unsandboxed=args.unsandboxed,
            feedback=args.feedback,
            progress=progress,
            scheduler=args.scheduler,
            pool=pool,
        )
    except SandboxUnavailable as exc:
        raise UserError(str(exc)) from None
    except GradebookUnavailable as exc:  # still unreachable after the retries: grading's fault
        print(f"attention-course: error: {one_line(str(exc))}; {RERUN}", file=sys.stderr)
        return 1
    except CourseError as exc:
        raise UserError(str(exc).replace("\n", " ")) from None
    except SchedulerLost as exc:  # a fault of grading, not of the input: exit 1
        print(f"attention-course: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "\nautograde interrupted: what was graded is kept; run the same command again to "
            "grade the rest",
            file=sys.stderr,
        )
        return 130
    try:
        steady(print_scores, args.assignment, root, False)  # (the run's lines say why not)
    except Exception as exc:  # noqa: BLE001 (classified: a gradebook gone after the run)
        if of_exception(exc) != TRANSIENT:
            raise
        print(f"attention-course: error: scores not shown: {describe(exc)}", file=sys.stderr)
        return 1
    for line in class_run_lines(run):
        print(line)
    pushed = True
    if args.lms_push:
        from attention_course.cli.lms_push import push_assignments

        pushed = push_assignments(root, [args.assignment])
    return 0 if run.ok and pushed else 1


def scores(args: argparse.Namespace) -> int:
    from attention_course.classgrade.nbgrader_api import gradebook_exists, gradebook_settings

    root = _course(args)
    assignment = _known(Course.load(root), args.assignment)
    if not gradebook_exists(root):  # a mistyped SQLite path: looking would make an empty one
        path = gradebook_settings(root)[0].removeprefix("sqlite:///").split("?")[0]
        raise UserError(f"no gradebook at {path} (autograde the assignment first)")
    print_scores(assignment, root)
    return 0


def extension(args: argparse.Namespace) -> int:
    from attention_course.classgrade.nbgrader_api import (
        CourseError,
        gradebook_scores,
        grant_extension,
    )
    from attention_course.integrations.check_limits import readable

    root = _course(args)
    assignment = _known(Course.load(root), args.assignment)
    if (args.hours is None) == (args.days is None):
        raise UserError("say how long: --hours N or --days N (0 takes the extension back)")
    hours = args.hours if args.hours is not None else args.days * 24
    if not 0 <= hours <= 24 * 366:
        raise UserError("an extension is between 0 and 366 days")
    try:
        due = grant_extension(assignment, args.student, root, hours)
    except CourseError as exc:
        raise UserError(str(exc)) from None
    given = f"{hours:g} hours" if hours else "no extension"
    when = readable(due) if due is not None else "none: the assignment has no due date"
    print(f"{args.student}, {assignment}: {given}; their due date: {when}")
    if args.student in gradebook_scores(assignment, root, args.student):
        print(
            f"{args.student} was graded already: `attention-course autograde {assignment} "
            f"--student {args.student} --force` grades the submission again under this due "
            "date (its late penalty and feedback)"
        )
    return 0


def report(args: argparse.Namespace) -> int:
    from attention_course.reports.class_report import ReportError, class_report
    from attention_course.reports.files import to_markdown, write_report

    root = _course(args)
    out = args.out or root / "reports" / args.assignment
    try:
        found = class_report(args.assignment, root)
        written = write_report(found, out)
    except ReportError as exc:
        raise UserError(str(exc)) from None
    print(to_markdown(found))
    print("Wrote " + ", ".join(str(p) for p in written))
    return 0


def similarity(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from attention_course.cli.progress import Progress
    from attention_course.grading.notebook import NotebookError
    from attention_course.settings import SIMILARITY
    from attention_course.similarity.compare import compare_class
    from attention_course.similarity.extract import submitted
    from attention_course.similarity.report import write_report

    course = _the_course(args)
    if args.assignment == course.quiz_assignment:
        raise UserError(f"{args.assignment} is the graded quiz: it has no code to compare")
    _known(course, args.assignment)
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


def gradescope(args: argparse.Namespace) -> int:
    from attention_course.integrations.gradescope import AutograderError, build_autograder

    out = args.out or Path(f"gradescope-{args.assignment}.zip")
    try:
        names = build_autograder(args.assignment, out, _course(args), args.unsandboxed)
    except AutograderError as exc:
        raise UserError(str(exc)) from None
    print(f"Wrote {out} ({len(names)} files): upload it as the autograder of a Gradescope")
    print(f"programming assignment; students submit {args.assignment}.ipynb.")
    return 0


def doctor(args: argparse.Namespace) -> int:
    from attention_course.sandbox.doctor import diagnose

    try:
        checks = diagnose(_the_course(args).root)
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


def demo(args: argparse.Namespace) -> int:
    from attention_course.cli.demo import run_demo

    try:
        return run_demo(_the_course(args), args.into)
    except (SandboxUnavailable, FileExistsError) as exc:
        raise UserError(str(exc)) from None


def student_config(args: argparse.Namespace) -> int:
    from attention_course.integrations.student_config import write_student_config

    if args.folder.exists() and not args.folder.is_dir():
        raise UserError(f"{args.folder}: exists and is not a folder")
    try:
        files = write_student_config(args.folder, args.course_id, args.exchange, _course(args))
    except OSError as exc:
        raise UserError(f"{args.folder}: cannot write ({exc.strerror})") from None
    for path in files:
        print(f"wrote {path}")
    folder = args.folder.resolve()
    print(
        f"Students start JupyterLab with: JUPYTER_CONFIG_PATH={folder} jupyter lab\n"
        "Set JUPYTER_CONFIG_PATH for every student (on JupyterHub in the spawner's environment, "
        "c.Spawner.environment; otherwise in /etc/profile.d/). The folder is read, never "
        "written: each student's workspaces and settings stay in their own ~/.jupyter."
    )
    return 0


def jupyterhub(args: argparse.Namespace) -> int:
    from attention_course.integrations import jupyterhub as hub

    students = tuple(name.strip() for name in args.students.split(",") if name.strip())
    plan = hub.HubPlan(
        course=_course(args),
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
