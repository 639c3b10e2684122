"""The Gradescope runner's own layers, each alone: `gradescope_run` writes results.json itself
when grading crashes (run here without run_autograder, whose shell fallback would write one
too), and it grades no notebook reached through a symbolic link."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.integrations import gradescope_run
from attention_course.integrations.gradescope import points
from tests.course import ASSIGNMENTS, COURSE, COURSE_ROOT

ASSIGNMENT = "attention_basics"


@pytest.fixture(scope="module")
def course_copy(tmp_path_factory) -> Path:
    return copy_course(tmp_path_factory.mktemp("gradescope-layers") / "course", COURSE_ROOT)


def _root(folder: Path) -> Path:
    """A stand-in /autograder: the settings an autograder zip holds, an empty submission."""
    root = folder / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    config = {"assignment": ASSIGNMENT, "points": points(COURSE, ASSIGNMENT)}
    (root / "source" / gradescope_run.CONFIG).write_text(json.dumps(config))
    return root


def _results(root: Path) -> dict:
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.parametrize("crash", ["no course part", "a grader missing"])
def test_the_runner_writes_results_itself_when_grading_crashes(course_copy, tmp_path, crash):
    course = tmp_path / "course"
    if crash == "a grader missing":
        shutil.copytree(course_copy, course)
        (course / "grader_tests" / "test_softmax.py").unlink()
    root = _root(tmp_path)
    released = COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    shutil.copy(released, root / "submission" / f"{ASSIGNMENT}.ipynb")
    proc = subprocess.run(  # the runner alone: no run_autograder around it
        [sys.executable, "-m", "attention_course.integrations.gradescope_run"]
        + ["--root", str(root), "--course", str(course)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = _results(root)
    assert results["score"] == 0
    assert [t["name"] for t in results["tests"]] == list(ASSIGNMENTS[ASSIGNMENT].graded)
    assert all(t["score"] == 0 and t["status"] == "failed" for t in results["tests"])
    assert "problem on the grading side" in results["output"]
    assert "Traceback" in proc.stdout and "Traceback" not in json.dumps(results)
    assert not (root / "results" / "results.json.part").exists()


def test_a_notebook_reached_through_a_link_is_not_graded(course_copy, tmp_path, capsys):
    """The submission holds the assignment's notebook as a link to the instructor's solutions
    (full marks, if it were read) and a linked folder holding them too: neither is graded."""
    solutions = course_copy / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    root = _root(tmp_path)
    (root / "submission" / f"{ASSIGNMENT}.ipynb").symlink_to(solutions)
    (root / "submission" / "work").symlink_to(solutions.parent, target_is_directory=True)
    code = gradescope_run.run(root, course_copy)
    capsys.readouterr()
    assert code == 0
    results = _results(root)
    assert results["score"] == 0
    assert "No notebook (.ipynb) in your submission" in results["output"]
    assert os.path.islink(root / "submission" / f"{ASSIGNMENT}.ipynb")  # left as it was
