"""Sending grades to the LMS from the command line: `lms push`, and `autograde --lms-push`."""

from __future__ import annotations

from pathlib import Path

from attention_course.errors import UserError

EXTRA = "pip install 'attention-course[lti]'"


def needs_extra() -> None:
    import importlib.util

    missing = [m for m in ("pylti1p3", "jwcrypto") if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(f"{missing[0]} is not installed: {EXTRA}")


def push_assignments(root: Path, assignments: list[str], dry_run: bool = False) -> bool:
    """Push each assignment's scores, printing what was sent; whether the LMS took them all."""
    from attention_course.integrations.lms import ags, config

    needs_extra()
    lms = config.require(root)
    ok = True
    for assignment in assignments:
        report = ags.push(assignment, root, lms, dry_run=dry_run)
        for line in report.sent + report.failed + report.not_sent:
            print(f"{assignment}: {line}")
        print(
            f"{assignment}: {len(report.sent)} sent, {report.unchanged} unchanged, "
            f"{len(report.failed)} refused by the LMS, {len(report.not_sent)} without an LMS id"
        )
        ok &= report.ok
    return ok
