"""JupyterLab's Assignments tab with readable submission times.

nbgrader's exchange stamps a submission with its `timestamp_format`, `%Y-%m-%d %H:%M:%S.%f %Z`
(such as `2026-12-02 14:03:12.482913 UTC`), and the Assignments tab shows that text as it is.
The stamp itself stays as it is (nbgrader reads it back for lateness and for the feedback's
folder); enabled as a Jupyter server extension (see the student configuration in
student_config.py), this module rewrites only what the tab's list answers, to `2026-12-02
14:03:12 UTC`, after nbgrader has sorted the submissions by their stamp.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

# A time of day to the second, then its fraction of a second (nbgrader's `%f`).
_FRACTION = re.compile(r"((?<!\d)\d{1,2}:\d{2}:\d{2})[.,]\d+")


def readable_timestamp(stamp: str) -> str:
    """`stamp` to the second: its fraction of a second dropped, the date and the zone (or
    offset) as written; a stamp with no time of day in it is returned as it is."""
    return _FRACTION.sub(r"\1", stamp, count=1)


def _with_readable_times(listing: dict[str, Any]) -> dict[str, Any]:
    """The submitted-assignments answer of nbgrader's list handler, its times readable."""
    if listing.get("success"):
        for assignment in listing.get("value", []):
            for submission in assignment.get("submissions", []):
                if isinstance(submission.get("timestamp"), str):
                    submission["timestamp"] = readable_timestamp(submission["timestamp"])
    return listing


def readable_listing(method: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """`AssignmentList.list_submitted_assignments`, answering with readable times."""

    @functools.wraps(method)
    def listed(self: object, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return _with_readable_times(method(self, *args, **kwargs))

    listed.readable_times = True  # type: ignore[attr-defined]
    return listed


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "attention_course.integrations.jupyter_assignments"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Make nbgrader's assignment list (/assignments) answer with readable submission times."""
    from nbgrader.server_extensions.assignment_list.handlers import AssignmentList

    method = AssignmentList.list_submitted_assignments
    if not getattr(method, "readable_times", False):  # once, however often the server loads it
        AssignmentList.list_submitted_assignments = readable_listing(method)
    serverapp.log.info("attention_course: the Assignments tab shows readable submission times")
