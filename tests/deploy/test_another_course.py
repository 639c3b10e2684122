"""The installed engine grades whichever course folder it is given: a copy of this course
whose reference softmax and causal_mask's points were changed is graded by the copy's own
graders (`check --course COPY`, `release` + `autograde --course COPY`, and `autograde` through
a Dask scheduler and worker started from the venv), while `check --course <repo>` on the same
notebook still gives full marks.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import copy_course, gradebook_scores
from attention_course.cli.samples import sample_notebooks
from tests.course import by_function
from tests.deploy.conftest import REPO_ROOT

pytestmark = pytest.mark.deploy  # one venv for tests/deploy/ (tests/conftest.py GROUPS)

ASSIGNMENT = "attention_basics"
STUDENT = "demo-instructor"
FULL = 35.0
# causal_mask's five grader tests are worth 1 point each; the copy makes its first one 3
CAUSAL_MASK = 7.0


def changed_course(dest: Path) -> Path:
    """A copy of the course whose reference softmax is another function (a softmax of 2z)
    and whose causal_mask grader (and test cell, for nbgrader) is worth 7 points, not 5."""
    course = copy_course(dest, REPO_ROOT)
    reference = course / "grader_tests" / "reference.py"
    text = reference.read_text()
    assert text.count("e = np.exp(z - m)") == 1
    reference.write_text(text.replace("e = np.exp(z - m)", "e = np.exp(2 * (z - m))"))
    grader = course / "grader_tests" / "test_causal_mask.py"
    text = grader.read_text()
    assert text.count("@points(1)") == 5
    grader.write_text(text.replace("@points(1)", "@points(3)", 1))
    path = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(path, as_version=4)
    (cell,) = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "causal_mask_tests"
    ]
    assert cell.metadata["nbgrader"]["points"] == 5
    cell.metadata["nbgrader"]["points"] = CAUSAL_MASK
    nbformat.write(nb, path)
    return course


@pytest.fixture(scope="module")
def course(engine_venv):
    """The changed copy, released by the venv's command, with the instructor's notebook
    submitted. Under /var/tmp: the sandbox gives student code a /tmp of its own, and the
    course must be hidden by the engine, not by where it lies."""
    base = Path(tempfile.mkdtemp(prefix="attention-another-", dir="/var/tmp"))
    try:
        root = changed_course(base / "course")
        proc = engine_venv.run("attention-course", "release", ASSIGNMENT, "--course", root)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        nb = sample_notebooks(ASSIGNMENT, root)[STUDENT]
        folder = root / "submitted" / STUDENT / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)


def check(engine_venv, course: Path, notebook: Path) -> dict:
    proc = engine_venv.run("attention-course", "check", notebook, "--json", "--course", course)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout)
    results["by_function"] = {
        name: (t["score"], t["max_score"]) for name, t in by_function(results).items()
    }
    return results


def test_check_grades_with_the_courses_own_graders(engine_venv, course):
    notebook = course / "submitted" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    mine = check(engine_venv, course, notebook)
    softmax, most = mine["by_function"]["softmax"]
    assert most == 10 and softmax < most, mine["by_function"]  # the copy's reference
    assert mine["by_function"]["causal_mask"] == (CAUSAL_MASK, CAUSAL_MASK)  # the copy's points
    assert mine["by_function"]["create_qkv"] == (5, 5)
    assert mine["max_score"] == FULL - 5 + CAUSAL_MASK
    repos = check(engine_venv, REPO_ROOT, notebook)  # the same notebook, graded by this course
    assert repos["score"] == repos["max_score"] == FULL, repos["by_function"]


def autograded(proc: subprocess.CompletedProcess) -> float:
    found = re.search(rf" {STUDENT}: graded \(([\d.]+) points\)", proc.stderr)
    assert found, proc.stdout + proc.stderr
    return float(found.group(1))


def test_autograde_grades_with_the_courses_own_graders(engine_venv, course):
    proc = engine_venv.run("attention-course", "autograde", ASSIGNMENT, "--course", course)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    scores = gradebook_scores(ASSIGNMENT, course)[STUDENT]
    assert scores["causal_mask_tests"] == CAUSAL_MASK
    assert scores["create_qkv_tests"] == 5
    assert scores["softmax_tests"] < 10
    assert autograded(proc) == scores["total"] < FULL - 5 + CAUSAL_MASK
    notebook = course / "submitted" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert check(engine_venv, course, notebook)["score"] == scores["total"]  # as check does


def test_autograde_on_a_dask_worker_started_from_the_venv(engine_venv, course):
    """`dask scheduler` and `dask worker` of the venv; the client sends the submission, the
    worker grades it with the course folder it sees at the same path."""
    scheduler_file = engine_venv.workdir / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    started = []

    def start(*argv: str) -> subprocess.Popen:
        proc = subprocess.Popen(
            [str(engine_venv.bin("dask")), *argv],
            cwd=engine_venv.workdir,
            env=engine_venv.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stopped with what it started
        )
        started.append(proc)
        return proc

    try:
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(scheduler_file))  # fmt: skip
        deadline = time.monotonic() + 120
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        address = json.loads(scheduler_file.read_text())["address"]
        start("worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard")
        proc = engine_venv.run(
            "attention-course", "autograde", ASSIGNMENT, "--course", course,
            "--scheduler", address, "--force",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        scores = gradebook_scores(ASSIGNMENT, course)[STUDENT]
        assert scores["causal_mask_tests"] == CAUSAL_MASK and scores["softmax_tests"] < 10
        assert autograded(proc) == scores["total"]
        logs = list((course / ".grading" / "workers").glob("*.log"))
        assert logs, "no grading job was started by a worker"
    finally:
        for proc in started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in started:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
