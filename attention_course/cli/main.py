"""The `attention-course` command: a thin layer over the library, one module per command
(COMMANDS), each with its parser and its handler."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

import attention_course
from attention_course.errors import UserError
from attention_course.startup import skip_slow_imports

__all__ = ["COMMANDS", "OneLineParser", "UserError", "build_parser", "main"]

# Every command, in the order `--help` lists them: the module cli/<name>.py holds its parser and
# what it does (`add_parser(sub)`, which sets the handler). A new command is a module, named here.
COMMANDS = (
    "release_command",
    "check_command",
    "autograde_command",
    "scores_command",
    "extension_command",
    "report_command",
    "similarity_command",
    "gradescope_command",
    "doctor_command",
    "demo_command",
    "student_config_command",
    "jupyterhub_command",
    "quiz_command",  # quiz: its own subcommands
    "hub_check_command",
    "hub_check_service_command",
    "hub_checks_command",
    "lms_command",  # lms: its own subcommands
)


class OneLineParser(argparse.ArgumentParser):
    """A parser whose every error is one line, as every other bad input is (no usage first):
    `attention-course autograde: error: ... (see attention-course autograde --help)`. Its
    subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        said = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {said} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="attention-course",
        description="Release, grade and quiz a course on the attention mechanism: the course is "
        "a folder (course.toml beside source/, release/, grader_tests/, quiz/), this engine "
        "reads it by path.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"attention-course {attention_course.__version__}",
        help="print the engine's version (the one feedback names) and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"attention_course.cli.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command; everything it prints passes through inert.terminal_text (a student's
    exception message, a student's id: never an escape sequence on a terminal)."""
    from attention_course.inert import InertStream

    skip_slow_imports()
    parser = build_parser()
    args = parser.parse_args(argv)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = InertStream(sys.stdout), InertStream(sys.stderr)
    try:
        return _run(args)
    finally:
        try:
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            pass
        sys.stdout, sys.stderr = streams


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.run(args) or 0)
    except UserError as exc:
        print(f"attention-course: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and the like
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("attention-course: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
