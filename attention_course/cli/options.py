"""Options every command that works on a course shares."""

from __future__ import annotations

import argparse
from pathlib import Path

from attention_course.settings import COURSE_ENV, COURSE_FILE

WHERE = (
    f" (default: ${COURSE_ENV}, else the folder holding {COURSE_FILE} at or above the current one)"
)


def add_course_option(p: argparse.ArgumentParser, what: str = "the course folder") -> None:
    """--course DIR: the course a command works on (see course.find_course)."""
    p.add_argument("--course", type=Path, default=None, metavar="DIR", help=what + WHERE)


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
