"""The arguments several commands share (each command's module adds its own)."""

from __future__ import annotations

import argparse
from pathlib import Path

from attention_course.settings import COURSE_ENV, COURSE_FILE, DB_ENV

WHERE = (
    f" (default: ${COURSE_ENV}, else the folder holding {COURSE_FILE} at or above the current one)"
)


def add_course_option(p: argparse.ArgumentParser, what: str = "the course folder") -> None:
    """--course DIR: the course a command works on (see course.find_course)."""
    p.add_argument("--course", type=Path, default=None, metavar="DIR", help=what + WHERE)


def add_assignment(p: argparse.ArgumentParser, what: str = "an assignment") -> None:
    p.add_argument(
        "assignment", metavar="ASSIGNMENT", help=f"{what} of the course (its {COURSE_FILE})"
    )


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="URL",
        help=f"the gradebook, e.g. postgresql://USER@HOST:PORT/DB (default: ${DB_ENV} if set, "
        "else nbgrader_config.py's, the course's gradebook.db)",
    )


def add_unsandboxed(p: argparse.ArgumentParser, where: str = "result") -> None:
    p.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade even where no sandbox can be made (student code then runs with limits "
        f"only, as your own user); every {where} says UNSANDBOXED",
    )


def positive(text: str) -> int:
    """An argument that counts something: a whole number, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not 1 or more")
    return value


def fraction(text: str) -> float:
    """An argument between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{value:g} is not between 0 and 1")
    return value
