"""The `attention-course` command: a thin layer over the library, one function per command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from attention_course.errors import UserError
from attention_course.startup import skip_slow_imports

__all__ = ["UserError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attention-course",
        description="Release, grade and quiz the attention-mechanism course.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    from attention_course.cli import commands

    commands.add_parsers(sub)

    try:
        from attention_course.cli import quiz as quiz_cli
    except ImportError:  # the quiz package is optional while it is being built
        quiz_cli = None
    if quiz_cli is not None:
        quiz_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    skip_slow_imports()
    parser = build_parser()
    args = parser.parse_args(argv)
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
