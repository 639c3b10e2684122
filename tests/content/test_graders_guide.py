"""The grader author's guide (docs/graders.md) is true: its files written as it shows them and
its commands run as it says, in an empty folder, make a course that releases and grades a class
with the scores the guide states."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from attention_course.classgrade.nbgrader_api import gradebook_scores

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "graders.md"
FILE = re.compile(r"File\s+`([^`]+)`:\s*\n\s*```[a-z]*\n(.*?)```", re.DOTALL)
COMMANDS = re.compile(r"```bash\n(.*?)```", re.DOTALL)

# what students hand in: the released notebook with its solution cell replaced
ANSWERS = {
    "right": """def layer_norm(x, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)""",
    "first_axis": """def layer_norm(x, eps=1e-5):
    mean = x.mean(axis=0, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=0, keepdims=True) + eps)""",
    "no_eps": """def layer_norm(x, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=-1, keepdims=True))""",
    "untouched": None,
}


def _run(commands: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # `attention-course`, python
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def _hand_in(course: Path, student: str, answer: str | None) -> None:
    nb = nbformat.read(course / "release" / "norms" / "norms.ipynb", as_version=4)
    if answer is not None:
        (cell,) = [
            c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "layer_norm"
        ]
        cell.source = answer
    folder = course / "submitted" / student / "norms"
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "norms.ipynb")


def test_the_guides_course_releases_and_grades_a_class(tmp_path):
    text = GUIDE.read_text()
    files = FILE.findall(text)
    commands = COMMANDS.findall(text)
    assert {p for p, _ in files} >= {
        "course.toml",
        "grader_tests/reference.py",
        "grader_tests/test_layer_norm.py",
        "make_notebook.py",
    }
    assert len(commands) == 4, "the guide's command blocks: folder, notebook, release, grade"
    (tmp_path / "attention-course").symlink_to(REPO)  # "this course", beside the new one
    course = tmp_path / "norms-course"

    done = _run(commands[0], tmp_path)  # the folder, nbgrader_config.py
    assert done.returncode == 0, done.stderr
    for path, content in files:
        (course / path).parent.mkdir(parents=True, exist_ok=True)
        (course / path).write_text(content)
    for block in commands[1:3]:  # the notebook; release and check
        done = _run(block, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (course / "release" / "norms" / "norms.ipynb").is_file()
    released = (course / "release" / "norms" / "norms.ipynb").read_text()
    assert "### BEGIN SOLUTION" not in released and "# grader:" not in released
    assert "not implemented yet" in done.stdout, done.stdout  # check: the untouched release

    for student, answer in ANSWERS.items():
        _hand_in(course, student, answer)
    done = _run(commands[3], tmp_path)  # autograde, scores
    assert done.returncode == 0, done.stdout + done.stderr
    totals = {s: cells["total"] for s, cells in gradebook_scores("norms", course).items()}
    assert totals["right"] == 4.0
    assert totals["first_axis"] == pytest.approx(1.0)  # the values' 3 points lost, not the 1
    assert totals["no_eps"] <= 3.0  # the row of one value gives NaN
    assert totals["untouched"] == 0.0
    assert "right" in done.stdout and "first_axis" in done.stdout  # `scores` lists them
    autograded = course / "autograded" / "first_axis" / "norms" / "norms.ipynb"
    assert "graded outside your kernel" in autograded.read_text()  # by the guide's grader


def test_the_guides_grader_draws_its_inputs_from_the_source_it_is_given(tmp_path):
    """The guide's grader file, written as the guide shows it, takes its random inputs from the
    seeded source the engine passes its `@cases` function, and from nothing else: the same seed
    gives the same inputs, another seed others, and the hand-written ones are the same under
    every seed. (Cheap: the grader is imported and its cases made, nothing is graded.)"""
    from attention_course.course import Course
    from attention_course.grading import course_graders, runner
    from attention_course.grading.draws import Draw

    for path, content in FILE.findall(GUIDE.read_text()):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(content)
    course = Course.load(tmp_path)
    module = course_graders.grader(course, "layer_norm")

    def inputs(seed: str) -> dict[str, list]:
        draw = Draw(course_graders.contract(course), seed).for_grader("layer_norm")
        cases = runner.cases_of(module, draw)
        return {family: [c.call.args[0] for c in found] for family, found in cases.items()}

    one, again, other = inputs("1" * 32), inputs("1" * 32), inputs("2" * 32)
    assert one.keys() == other.keys() == {"row", "drawn", "constant"}
    for family in one:  # the same seed, the same inputs
        assert all(np.array_equal(a, b) for a, b in zip(one[family], again[family], strict=True))
    for family in ("row", "constant"):  # written by hand: the same for everybody
        assert all(np.array_equal(a, b) for a, b in zip(one[family], other[family], strict=True))
    assert not any(  # drawn under the submission's seed: every one of them other
        np.shape(a) == np.shape(b) and np.allclose(a, b)
        for a, b in zip(one["drawn"], other["drawn"], strict=True)
    )
