"""The README's main job, `attention-course demo`, as a new user runs it (the session's
`demo_run`): it grades its class in a course folder of its own and leaves this repository
exactly as it found it."""

from __future__ import annotations

from tests.course import ALL_ASSIGNMENTS, COURSE_ROOT


def test_the_demo_grades_its_class_and_leaves_the_repository_as_it_was(demo_run):
    out = demo_run.proc.stdout
    assert not demo_run.root.is_relative_to(COURSE_ROOT)
    for assignment in ALL_ASSIGNMENTS:
        assert f"{assignment}: scores stored in the gradebook" in out
    assert "demo-instructor" in out and "demo-broken: not graded" in out
    assert demo_run.after == demo_run.before  # no gradebook, student folder or export
