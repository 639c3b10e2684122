"""A class through nbgrader's exchange, as the README tells instructors and students to run it.

One course folder (the instructor) and two students, each with only the configuration
`attention-course student-config` writes (on JUPYTER_CONFIG_PATH, their own ~/.jupyter
besides): release, fetch, fill in, submit, collect,
`attention-course autograde` (which writes the feedback), release the feedback, fetch it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import copy_course, gradebook_scores
from attention_course.cli.samples import sample_notebooks
from tests.course import COURSE_ROOT

ASSIGNMENT = "attention_basics"
BIN = Path(sys.executable).parent
STUDENTS = {"alice": "demo-instructor", "bob": "demo-partial"}


def run(argv: list[str], cwd: Path, user: str, config: Path | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env.update(USER=user, LOGNAME=user, HOME=str(cwd), PATH=f"{BIN}:/usr/bin:/bin")
    if config is not None:  # the students' configuration, as the README says to set it
        env["JUPYTER_CONFIG_PATH"] = str(config)
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(argv)}:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def round_trip():
    base = Path(tempfile.mkdtemp(prefix="attention-exchange-", dir="/var/tmp"))
    try:
        course = copy_course(base / "course", COURSE_ROOT)
        (course / "exchange").mkdir(mode=0o777)  # the exchange (README: shared, writable)
        nbgrader, attention = str(BIN / "nbgrader"), str(BIN / "attention-course")
        run([attention, "release", ASSIGNMENT, "--course", str(course)], course, "teacher")
        run([nbgrader, "release_assignment", ASSIGNMENT], course, "teacher")
        samples = sample_notebooks(ASSIGNMENT, course)
        config = base / "student-jupyter"
        run([attention, "student-config", str(config), "--course", str(course)], base, "teacher")
        homes = {}
        for student, kind in STUDENTS.items():
            home = base / student
            home.mkdir()
            run([nbgrader, "fetch_assignment", ASSIGNMENT], home, student, config)
            fetched = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            nb = nbformat.read(fetched, 4)
            solutions = {c.get("id"): c.source for c in samples[kind].cells}
            for cell in nb.cells:
                if cell.metadata.get("nbgrader", {}).get("solution"):
                    cell.source = solutions[cell.get("id")]
            nbformat.write(nb, fetched)
            # each student is an OS user of their own on a JupyterHub; here all run as one
            # user, so each says who they are (nbgrader's --student)
            run([nbgrader, "submit", ASSIGNMENT, f"--student={student}"], home, student, config)
            homes[student] = (home, config)
        run([nbgrader, "collect", ASSIGNMENT], course, "teacher")
        graded = run([attention, "autograde", ASSIGNMENT, "--course", str(course)], course, "t")
        run([nbgrader, "release_feedback", ASSIGNMENT], course, "teacher")
        for student, (home, config) in homes.items():
            fetch = [nbgrader, "fetch_feedback", ASSIGNMENT, f"--student={student}"]
            run(fetch, home, student, config)
        yield course, homes, graded
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_collected_submissions_are_graded(round_trip):
    course, _, graded = round_trip
    scores = gradebook_scores(ASSIGNMENT, course)
    assert sorted(scores) == sorted(STUDENTS)
    instructor = sample_notebooks(ASSIGNMENT, course)["demo-instructor"]
    full = sum(
        float(c.metadata["nbgrader"]["points"])
        for c in instructor.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    )
    assert scores["alice"]["total"] == full
    assert 0 < scores["bob"]["total"] < full
    assert "2 graded" in graded.stdout


def test_each_student_fetches_their_own_feedback(round_trip):
    _, homes, _ = round_trip
    for student, (home, _) in homes.items():
        pages = list((home / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
        assert len(pages) == 1, student
        html = pages[0].read_text()
        assert "PASS [" in html
        other = next(s for s in STUDENTS if s != student)
        assert f"/{other}/" not in html
