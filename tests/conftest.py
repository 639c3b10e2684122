"""Shared fixtures: a throw-away copy of the course, graded once per test session; and a check
that no test wrote into the repository."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from attention_course.assignments import COURSE_ROOT, REFERENCE_FILE
from attention_course.course import copy_course
from attention_course.grading import GradeReport, grade_file


def grade_reference_variants(
    folder: Path, variants: dict[str, tuple[str, list[str] | None, str]], in_process: bool = False
) -> dict[str, GradeReport]:
    """Grade each variant, key -> (assignment, functions or None for all, code): the program is
    the reference followed by `code`, whose definitions override the reference's. Two at a
    time (one worker each, and a pytest process each unless `in_process`)."""
    reference = REFERENCE_FILE.read_text()

    def grade(key: str) -> tuple[str, GradeReport]:
        assignment, functions, code = variants[key]
        path = folder / (key.replace("/", "__") + ".py")
        path.write_text(reference + "\n\n# ---- variant ----\n\n" + code)
        return key, grade_file(path, assignment, functions=functions, in_process=in_process)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(grade, variants))


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory):
    """Every sample student of every assignment, autograded by nbgrader in a course copy.

    Returns (root, {assignment: the ClassRun of `autograde_class`}).
    """
    from attention_course.course import release
    from attention_course.demo import grade_sample_class

    root = copy_course(tmp_path_factory.mktemp("course"))
    release(root=root)  # records the assignments in the copy's gradebook
    return root, grade_sample_class(root)


CACHES = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache"}


def repository_files(root: Path = COURSE_ROOT) -> dict[str, tuple[int, int]]:
    """Every file of the repository but caches and the virtual environment: (size, mtime)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in CACHES and not d.endswith(".egg-info")]
        for name in files:
            stat = os.lstat(os.path.join(folder, name))
            found[os.path.relpath(os.path.join(folder, name), root)] = (
                stat.st_size,
                stat.st_mtime_ns,
            )
    return found


@pytest.fixture(scope="session", autouse=True)
def repository_untouched():
    """Tests work in course copies and temporary folders: whatever the machine lacks, the run
    ends with the repository's files as they were (an error at the end of the run says which)."""
    before = repository_files()
    yield
    after = repository_files()
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    assert not changed, f"the tests wrote into the repository: {changed[:10]}"
