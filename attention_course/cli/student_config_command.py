"""`attention-course student-config`: the students' Jupyter configuration."""

from __future__ import annotations

import argparse
from pathlib import Path

from attention_course.cli.common import (
    course_root,
)
from attention_course.cli.options import (
    add_course_option,
)
from attention_course.errors import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    add_course_option(p, "the course whose nbgrader_config.py gives the defaults")
    p.set_defaults(run=student_config)


def student_config(args: argparse.Namespace) -> int:
    from attention_course.integrations.student_config import write_student_config

    if args.folder.exists() and not args.folder.is_dir():
        raise UserError(f"{args.folder}: exists and is not a folder")
    try:
        files = write_student_config(args.folder, args.course_id, args.exchange, course_root(args))
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
