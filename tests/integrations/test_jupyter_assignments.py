"""Readable submission times in the Assignments tab (the tab: tests/browser/test_student.py)."""

from __future__ import annotations

import pytest

from attention_course.integrations import jupyter_assignments
from attention_course.integrations.jupyter_assignments import readable_timestamp


@pytest.mark.parametrize(
    ("stamp", "shown"),
    [
        ("2026-12-02 14:03:12.482913 UTC", "2026-12-02 14:03:12 UTC"),  # nbgrader's default
        ("2026-12-02 14:03:12.482913 CET", "2026-12-02 14:03:12 CET"),
        ("2026-12-02T14:03:12.482913+01:00", "2026-12-02T14:03:12+01:00"),
        ("2026-12-02 14:03:12.482913", "2026-12-02 14:03:12"),
        ("2026-12-02 14:03:12 UTC", "2026-12-02 14:03:12 UTC"),  # already to the second
        ("not a time 1.5", "not a time 1.5"),
        ("", ""),
    ],
)
def test_readable_timestamp(stamp, shown):
    assert readable_timestamp(stamp) == shown


def test_the_server_extension_makes_the_list_readable_once(monkeypatch):
    from nbgrader.server_extensions.assignment_list.handlers import AssignmentList

    raw = "2026-12-02 14:03:12.482913 UTC"

    def listed(self, course_id=None):
        submission = {"timestamp": raw}
        return {"success": True, "value": [{"submissions": [submission]}]}

    monkeypatch.setattr(AssignmentList, "list_submitted_assignments", listed)

    class App:
        class log:  # noqa: N801 - stands in for the server's logger
            @staticmethod
            def info(*args):
                pass

    for _ in range(2):  # loaded twice, wrapped once
        jupyter_assignments._load_jupyter_server_extension(App())
    answer = AssignmentList.list_submitted_assignments(object())
    assert answer["value"][0]["submissions"][0]["timestamp"] == "2026-12-02 14:03:12 UTC"
    assert AssignmentList.list_submitted_assignments.__wrapped__ is listed
    failed = {"success": False, "value": "the exchange is missing"}
    monkeypatch.setattr(AssignmentList, "list_submitted_assignments", lambda self: failed)
    jupyter_assignments._load_jupyter_server_extension(App())
    assert AssignmentList.list_submitted_assignments(object()) == failed
