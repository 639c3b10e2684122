"""Shared fixtures: a throw-away copy of the course, graded once per test session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from attention_course.assignments import COURSE_ROOT


def copy_course(dest: Path) -> Path:
    """The course's own files (not .venv, not student data) copied to `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(COURSE_ROOT / "nbgrader_config.py", dest)
    for folder in ("source", "release"):
        shutil.copytree(COURSE_ROOT / folder, dest / folder)
    return dest


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory):
    """Every sample student of every assignment, autograded by nbgrader in a course copy.

    Returns (root, {assignment: {student: nbgrader result dict}}).
    """
    from attention_course.course import release
    from attention_course.demo import grade_sample_class

    root = copy_course(tmp_path_factory.mktemp("course"))
    release(root=root)  # records the assignments in the copy's gradebook
    return root, grade_sample_class(root)
