"""The subcommands of `attention-course` and their options (handlers.py runs them)."""

from __future__ import annotations

import argparse
from pathlib import Path

from attention_course.cli import handlers
from attention_course.cli.options import add_course_option, fraction, positive
from attention_course.settings import COURSE_FILE, DB_ENV, DEFAULT_JOBS, HUB, HUB_CHECK, SIMILARITY

_course = add_course_option


def _assignment(p: argparse.ArgumentParser, what: str = "an assignment") -> None:
    p.add_argument(
        "assignment", metavar="ASSIGNMENT", help=f"{what} of the course (its {COURSE_FILE})"
    )


def _db(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="URL",
        help=f"the gradebook, e.g. postgresql://USER@HOST:PORT/DB (default: ${DB_ENV} if set, "
        "else nbgrader_config.py's, the course's gradebook.db)",
    )


def _unsandboxed(p: argparse.ArgumentParser, where: str = "result") -> None:
    p.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade even where no sandbox can be made (student code then runs with limits "
        f"only, as your own user); every {where} says UNSANDBOXED",
    )


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "release",
        help="regenerate release/ from source/ with nbgrader",
        description="Regenerate release/<assignment>/ from source/ (solutions and hidden "
        "tests stripped) and record the assignments in the gradebook. Commit the result.",
    )
    p.add_argument(
        "assignments",
        nargs="*",
        metavar="ASSIGNMENT",
        help="assignments to release (default: every one in source/)",
    )
    _course(p)
    _db(p)
    p.set_defaults(run=handlers.release)

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
    _unsandboxed(p)
    _course(
        p,
        "the course whose graders grade it (and whose source notebooks the quiz's locked cells "
        "come from)",
    )
    p.set_defaults(run=handlers.check)

    p = sub.add_parser(
        "autograde",
        help="grade what is new or changed in submitted/ into the gradebook",
        description="Autograde submitted/<student>/<assignment>/ with nbgrader: only "
        "submissions that are new or changed since they were last graded (--force: all), "
        "JOBS at a time, each under a deadline, with their feedback. Records the assignment "
        "in the gradebook first if needed. A run stopped at any point is finished by the next. "
        "Prints progress, the gradebook's scores, and why each ungraded submission was not "
        "graded. Exit 0 when every submission has a score or a recorded reason.",
    )
    _assignment(p)
    p.add_argument(
        "--student",
        action="append",
        metavar="ID",
        help="grade only this student (repeat for several; default: every submitted student)",
    )
    p.add_argument(
        "--jobs",
        type=positive,
        default=DEFAULT_JOBS,
        help=f"submissions graded side by side (default: {DEFAULT_JOBS}, the cores); with "
        "--scheduler local, the Dask worker processes",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on a Dask cluster, one task per submission: its scheduler's address "
        "(tcp://HOST:8786; the workers need this package and the course folder at the same "
        "path), or 'local' for a Dask LocalCluster of JOBS worker processes here",
    )
    p.add_argument(
        "--force", action="store_true", help="grade every submission again, changed or not"
    )
    p.add_argument(
        "--no-feedback",
        dest="feedback",
        action="store_false",
        help="do not write the graded submissions' feedback (nbgrader generate_feedback)",
    )
    p.add_argument(
        "--lms-push",
        action="store_true",
        help="then send the assignment's scores to the LMS (attention-course lms push: only "
        "what changed; needs course.toml's [lms])",
    )
    _unsandboxed(p, "student's feedback")
    _course(p)
    _db(p)
    p.set_defaults(run=handlers.autograde)

    p = sub.add_parser("scores", help="print the gradebook's scores for an assignment")
    _assignment(p)
    _course(p)
    _db(p)
    p.set_defaults(run=handlers.scores)

    p = sub.add_parser(
        "extension",
        help="give one student more time for an assignment (nbgrader's extension)",
        description="Give STUDENT more time than the assignment's due date (set with `nbgrader "
        "db assignment add ASSIGNMENT --duedate=...`), kept in the gradebook as nbgrader keeps "
        "an extension: autograde's late penalty, the feedback, the scores, the report, the "
        "export and the Check button all use the student's own due date. Extensions do not "
        "add up: the last one given stands; --hours 0 takes it back. Prints the student's "
        "due date.",
    )
    _assignment(p)
    p.add_argument("student", metavar="STUDENT", help="the student's nbgrader id")
    p.add_argument(
        "--hours", type=float, default=None, help="hours after the assignment's due date"
    )
    p.add_argument("--days", type=float, default=None, help="days after the due date")
    _course(p)
    _db(p)
    p.set_defaults(run=handlers.extension)

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
    _assignment(p)
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="folder for the files (default: DIR/reports/ASSIGNMENT/)",
    )
    _course(p)
    _db(p)
    p.set_defaults(run=handlers.report)

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
    _assignment(p, "a graded assignment (not the quiz)")
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
    _course(p)
    p.set_defaults(run=handlers.similarity)

    p = sub.add_parser(
        "gradescope",
        help="build a Gradescope autograder zip for an assignment",
        description="Build a Gradescope autograder (setup.sh, run_autograder, the graders, the "
        "reference and this package) that grades a submitted notebook with the same graders "
        "and sandbox as `check` and always writes results.json. Upload the zip as the "
        "autograder of a Gradescope programming assignment.",
    )
    _assignment(p, "a graded assignment (not the quiz)")
    p.add_argument(
        "--out",
        type=Path,
        metavar="ZIP",
        help="the zip to write (default: gradescope-ASSIGNMENT.zip in the current folder)",
    )
    _course(p, "the course folder whose graders go in")
    _unsandboxed(p)
    p.set_defaults(run=handlers.gradescope)

    p = sub.add_parser(
        "doctor",
        help="check that student code is contained on this machine",
        description="Start a sandbox exactly as grading does and try, from inside, what a "
        "hostile student would (read the course, reach the network, gain privileges, write "
        "outside /tmp); print every guarantee and whether it holds. Exit 0 when all hold.",
    )
    _course(p, "the course folder that must stay hidden")
    p.set_defaults(run=handlers.doctor)

    p = sub.add_parser(
        "demo",
        help="release, grade a sample class and print its scores",
        description="In a course folder of its own (never this repository's gradebook or "
        "student folders): release every assignment, write a sample class (instructor "
        "solution, a partly correct student, an untouched stub, a hostile one, a broken "
        "file), autograde it, write feedback and class reports, and print the scores.",
    )
    _course(p, "the course to demonstrate")
    p.add_argument(
        "--into",
        type=Path,
        metavar="DIR",
        help="where to build the demo's copy of the course (default: a new temporary folder)",
    )
    p.set_defaults(run=handlers.demo)

    p = sub.add_parser(
        "student-config",
        help="write the students' Jupyter configuration (no instructor tools)",
        description="Write a Jupyter configuration folder for students, readable by "
        "everybody: JupyterLab started with JUPYTER_CONFIG_PATH=FOLDER shows the Assignments "
        "tab and the Validate button (which answers with the failing check first), not "
        "formgrader, Create Assignment or the course list; nbgrader finds the course's "
        "exchange. Students need not be able to write it (their own ~/.jupyter keeps their "
        "workspaces and settings).",
    )
    p.add_argument("folder", type=Path, metavar="FOLDER", help="the folder to write")
    p.add_argument("--course-id", help="nbgrader course id (default: nbgrader_config.py's)")
    p.add_argument(
        "--exchange", help="the exchange folder students use (default: nbgrader_config.py's)"
    )
    _course(p, "the course whose nbgrader_config.py gives the defaults")
    p.set_defaults(run=handlers.student_config)

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
    _course(p, "the course the hub serves (its instructor's own folder)")
    p.set_defaults(run=handlers.jupyterhub)
