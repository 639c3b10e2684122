"""The Gradescope autograder: its zip, and run_autograder against a stand-in /autograder."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

import nbformat
import pytest

import attention_course
from attention_course.cli.samples import fill, sample_notebooks
from attention_course.integrations.gradescope import build_autograder
from attention_course.integrations.wheel import wheel_name
from tests.content.test_notebooks import cell_points
from tests.course import ASSIGNMENTS, COURSE_ROOT, REFERENCE_FILE, by_function

ASSIGNMENT = "attention_basics"
FULL = sum(cell_points(ASSIGNMENT).values())  # the points of its test cells
# Gradescope's results.json, as documented in
# https://gradescope-autograders.readthedocs.io/en/latest/specs/ ("Output format").
DOCUMENTED = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "test_name_format",
    "visibility",
    "stdout_visibility",
    "extra_data",
    "tests",
    "leaderboard",
}
DOCUMENTED_TEST = {
    "score",
    "max_score",
    "status",
    "name",
    "name_format",
    "number",
    "output",
    "output_format",
    "tags",
    "visibility",
    "extra_data",
}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    build_autograder(ASSIGNMENT, path, COURSE_ROOT)
    return path


@pytest.fixture(scope="module")
def notebooks() -> dict:
    return sample_notebooks(ASSIGNMENT, COURSE_ROOT)


def stand_in_root(zip_path: Path, folder: Path, submission: dict[str, object]) -> Path:
    """A folder laid out as Gradescope lays out /autograder, with the given submitted files."""
    root = folder / "autograder"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    (root / "submission").mkdir()
    for name, content in submission.items():
        path = root / "submission" / name
        if isinstance(content, str):
            path.write_text(content)
        else:
            nbformat.write(content, path)
    return root


def run_autograder(root: Path, **env: str) -> tuple[dict, str]:
    """Run run_autograder as Gradescope does (working folder: the root) with this Python."""
    env = {"ATTENTION_COURSE_PYTHON": sys.executable, **env}
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        cwd=root,
        env={**os.environ, "AUTOGRADER_ROOT": str(root), **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert_gradescope_format(results)
    return results, proc.stdout


def assert_gradescope_format(results: dict) -> None:
    assert set(results) <= DOCUMENTED, set(results) - DOCUMENTED
    # every output quotes student code: shown as plain text, never as HTML or Markdown
    # (Gradescope's default, "simple_format", keeps sanitised HTML: links and images)
    assert results["output_format"] == results["test_output_format"] == "text"
    assert results["test_name_format"] == "text"
    assert all(t.get("output_format", "text") == "text" for t in results["tests"])
    assert isinstance(results["score"], (int, float))
    assert results.get("visibility", "visible") in VISIBILITY
    assert results.get("stdout_visibility", "hidden") in VISIBILITY
    assert isinstance(results["tests"], list)
    for test in results["tests"]:
        assert set(test) <= DOCUMENTED_TEST, set(test) - DOCUMENTED_TEST
        assert {"name", "score", "max_score", "output", "visibility"} <= set(test)
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
        assert 0 <= test["score"] <= test["max_score"]
        assert test["visibility"] in VISIBILITY
        assert test["status"] in ("passed", "failed")
    penalty = results.get("extra_data", {}).get("late_penalty", 0.0)
    assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]) - penalty)


def check_json(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "check", str(path), "--json"],
        capture_output=True,
        text=True,
    )


def assert_same_as_check(results: dict, path: Path) -> dict:
    proc = check_json(path)
    assert proc.returncode == 0, proc.stderr
    checked = json.loads(proc.stdout)
    assert results["score"] == checked["score"]
    assert [(t["name"], t["score"], t["max_score"], t["output"]) for t in results["tests"]] == [
        (t["name"], t["score"], t["max_score"], t["output"]) for t in checked["tests"]
    ]
    return checked


@pytest.mark.parametrize(
    "student, name, expected",
    [
        ("demo-instructor", f"{ASSIGNMENT}.ipynb", "full"),
        ("demo-partial", f"{ASSIGNMENT}.ipynb", None),
        ("demo-stub", f"{ASSIGNMENT}.ipynb", 0),
        ("demo-partial", "homework (1).ipynb", None),  # a notebook under another name
    ],
)
def test_same_scores_as_check(autograder_zip, notebooks, tmp_path, student, name, expected):
    root = stand_in_root(autograder_zip, tmp_path, {name: notebooks[student]})
    results, stdout = run_autograder(root)
    checked = assert_same_as_check(results, root / "submission" / name)
    if expected is not None:
        assert results["score"] == (FULL if expected == "full" else expected)
    else:
        assert 0 < results["score"] < checked["max_score"]
        assert "FAIL" in json.dumps(results["tests"]) and "PASS" in json.dumps(results["tests"])
    assert results["extra_data"]["max_score"] == checked["max_score"] == FULL
    if name != f"{ASSIGNMENT}.ipynb":
        assert (
            f"Graded {name} (this assignment's notebook is {ASSIGNMENT}.ipynb)"
            in (results["output"])
        )
    assert "sandbox:" in stdout and "total" in stdout  # the instructor's view


HOSTILE_NAME = "<img src=x onerror=alert(1)>.ipynb"
HOSTILE_MESSAGE = (
    "![tracker](http://evil.example/t.png) [Click for your regrade](http://evil.example/r) "
    "<a href='http://evil.example/a'>here</a> =HYPERLINK(\"http://evil.example/f\")"
)


def test_student_text_reaches_gradescope_as_plain_text(autograder_zip, tmp_path):
    """A notebook named as HTML, whose softmax raises Markdown, HTML and a formula: the results
    declare every output plain text, and hold the student's text as it was."""
    source = f"def softmax(z, axis=-1):\n    raise ValueError({HOSTILE_MESSAGE!r})\n"
    released = COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = fill(released, {"softmax": source})
    root = stand_in_root(autograder_zip, tmp_path, {HOSTILE_NAME: notebook})
    results, _ = run_autograder(root)  # checks the plain-text formats
    assert results["score"] == 0
    assert f"Graded {HOSTILE_NAME} (this assignment's notebook is" in results["output"]
    softmax = by_function(results)["softmax"]
    assert f"softmax raised ValueError: {HOSTILE_MESSAGE}" in softmax["output"]


@pytest.mark.long  # (each value's meaning: test_gradescope_run.py; late work: test_late_work.py)
def test_declared_visibility_and_late_policy_end_to_end(notebooks, tmp_path):
    """A course that keeps the graders' details for after the due date, its total for after
    publication, and late work at 0: its zip, run as Gradescope runs it on a late submission
    (Gradescope's submission_metadata.json: 90 minutes after the due date)."""
    from attention_course.classgrade.nbgrader_api import copy_course

    course = copy_course(tmp_path / "course", COURSE_ROOT)
    with (course / "course.toml").open("a") as toml:
        toml.write('\n[gradescope]\nresult = "after_published"\ntests = "after_due_date"\n')
        toml.write("hints = false\n")
    with (course / "nbgrader_config.py").open("a") as config:
        config.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    zip_path = tmp_path / "autograder.zip"
    build_autograder(ASSIGNMENT, zip_path, course)
    root = stand_in_root(zip_path, tmp_path, {f"{ASSIGNMENT}.ipynb": notebooks["demo-partial"]})
    metadata = {
        "created_at": "2026-12-01T13:30:00.000000+00:00",
        "assignment": {"due_date": "2026-12-01T04:00:00.000000-08:00", "late_due_date": None},
        "users": [{"email": "student@example.edu", "id": 1, "name": "A Student"}],
    }
    (root / "submission_metadata.json").write_text(json.dumps(metadata))
    env = {"ATTENTION_COURSE_PYTHON": sys.executable, "AUTOGRADER_ROOT": str(root)}
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    raw = results["extra_data"]["raw_score"]
    assert 0 < raw < FULL and results["score"] == 0 == raw - results["extra_data"]["late_penalty"]
    assert (
        "Late submission: 1.5 hours after the due date (2026-12-01 12:00 UTC)"
        in (results["output"])
    )
    assert results["visibility"] == "after_published"
    assert {t["visibility"] for t in results["tests"]} == {"after_due_date"}
    assert sum(t["score"] for t in results["tests"]) == raw  # each test's points, unchanged
    failed = [t for t in results["tests"] if t["status"] == "failed"]
    assert failed and all("\n" not in t["output"] for t in failed)  # the hints withheld
    assert len(results["tests"]) > len(ASSIGNMENTS[ASSIGNMENT].graded)
    assert set(results) <= DOCUMENTED and all(set(t) <= DOCUMENTED_TEST for t in results["tests"])


def test_invalid_json_gets_zero_and_the_reason(autograder_zip, tmp_path, notebooks):
    root = stand_in_root(
        autograder_zip, tmp_path, {f"{ASSIGNMENT}.ipynb": notebooks["demo-broken"]}
    )
    results, _ = run_autograder(root)
    assert results["score"] == 0
    assert [t["name"] for t in results["tests"]] == list(ASSIGNMENTS[ASSIGNMENT].graded)
    assert sum(t["max_score"] for t in results["tests"]) == FULL
    assert "not valid notebook JSON" in results["output"]
    assert str(root) not in json.dumps(results)  # the student's file name, not our folders
    proc = check_json(root / "submission" / f"{ASSIGNMENT}.ipynb")  # check: no score either
    assert proc.returncode == 2 and "not valid notebook JSON" in proc.stderr


def test_no_notebook_gets_zero_and_says_what_to_upload(autograder_zip, tmp_path):
    root = stand_in_root(autograder_zip, tmp_path, {"answers.txt": "my softmax is great"})
    results, _ = run_autograder(root)
    assert results["score"] == 0
    assert (
        f"No notebook (.ipynb) in your submission: upload {ASSIGNMENT}.ipynb" in (results["output"])
    )


def test_a_crash_of_the_graders_still_writes_results(autograder_zip, tmp_path, notebooks):
    root = stand_in_root(
        autograder_zip, tmp_path, {f"{ASSIGNMENT}.ipynb": notebooks["demo-partial"]}
    )
    (root / "source" / "course" / "grader_tests" / "test_softmax.py").unlink()
    results, stdout = run_autograder(root)
    assert results["score"] == 0
    assert "problem on the grading side" in results["output"]
    text = json.dumps(results)
    assert "Traceback" not in text and "grader_tests" not in text
    assert "Traceback" in stdout  # for the instructor, who sees stdout


def test_python_that_cannot_start_still_writes_results(autograder_zip, tmp_path, notebooks):
    root = stand_in_root(
        autograder_zip, tmp_path, {f"{ASSIGNMENT}.ipynb": notebooks["demo-partial"]}
    )
    results, stdout = run_autograder(root, ATTENTION_COURSE_PYTHON=str(tmp_path / "no-python"))
    assert results["score"] == 0 and "problem on the grading side" in results["output"]
    assert "ended with status 127 without writing" in stdout


def test_grading_that_runs_out_of_time_still_writes_results(autograder_zip, tmp_path, notebooks):
    # A solution cell that sleeps 4 s (under the 10 s limit of one cell) outlasts a 2 s limit
    # on the whole run however fast grading is.
    slow = copy.deepcopy(notebooks["demo-partial"])
    (cell,) = [c for c in slow.cells if c.get("id") == "softmax"]
    cell.source += "\n\nimport time\ntime.sleep(4)\n"
    root = stand_in_root(autograder_zip, tmp_path, {f"{ASSIGNMENT}.ipynb": slow})
    results, stdout = run_autograder(root, ATTENTION_COURSE_TIMEOUT="2")
    assert results["score"] == 0 and "took too long" in results["output"]
    assert "status 124" in stdout


def test_output_teaches_without_grader_code_or_reference(autograder_zip, tmp_path, notebooks):
    root = stand_in_root(
        autograder_zip, tmp_path, {f"{ASSIGNMENT}.ipynb": notebooks["demo-partial"]}
    )
    results, _ = run_autograder(root)
    text = "\n".join([results["output"], *(t["output"] for t in results["tests"])])
    assert "takes np.exp of the scores as they are" in text  # the partial's softmax's mistake
    assert "subtracts each slice's own maximum" in text  # and the idea it misses
    assert "marks what is FORBIDDEN" in text  # and of its np.tril mask
    sources = [REFERENCE_FILE, *ASSIGNMENTS[ASSIGNMENT].grader_files()]
    # Code lines (not docstrings or comments); short ones such as `d_k = Q.shape[-1]` are the
    # exercise contract's own words, which descriptions may quote.
    code = [
        line.strip()
        for path in sources
        for line in path.read_text().splitlines()
        if len(line.strip()) > 20 and not line.strip().startswith(('"', "#"))
    ]
    assert code
    leaked = [line for line in code if line in text]
    assert leaked == []
    assert "grader_tests" not in text and "reference" not in text.lower()


def test_student_code_sees_nothing_of_the_autograder(autograder_zip, notebooks):
    """Student code looks for the graders, the reference, the settings, the submission and the
    results, and tries to write its own results.json: it finds nothing and writes nothing.
    The stand-in root lies outside /tmp (the sandbox has a private /tmp of its own anyway)."""
    folder = Path(tempfile.mkdtemp(prefix="attention-gradescope-", dir="/var/tmp"))
    folder.chmod(0o755)  # readable by everybody, as a real /autograder may be
    root = folder / "autograder"
    probe = f"""import os
import numpy as np
ROOT = {str(root)!r}
wanted = [ROOT + "/source/course/grader_tests/reference.py", ROOT + "/source/autograder.json",
          ROOT + "/source/course/grader_tests", ROOT + "/submission", ROOT + "/results"]
seen = [p for p in wanted if os.path.exists(p)]
try:
    with open(ROOT + "/results/results.json", "w") as out:
        out.write('{{"score": 1000, "tests": []}}')
    seen.append("wrote results.json")
except OSError:
    pass
raise RuntimeError("seen: " + repr(seen))
"""
    solutions = {"softmax": probe}
    released = COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = fill(released, solutions)
    try:
        assert stand_in_root(autograder_zip, folder, {f"{ASSIGNMENT}.ipynb": nb}) == root
        results, _ = run_autograder(root)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    softmax = by_function(results)["softmax"]
    assert "raised RuntimeError: seen: []" in softmax["output"]
    assert results["score"] == 0


def test_the_grading_code_is_the_zips(autograder_zip, tmp_path):
    root = stand_in_root(autograder_zip, tmp_path, {})
    _, stdout = run_autograder(root)
    assert f"course: {root / 'source' / 'course'}" in stdout
    assert f"graded by attention-course {attention_course.__version__}" in stdout


def test_zip_holds_what_grading_needs_and_is_reproducible(autograder_zip, tmp_path):
    again = tmp_path / "again.zip"
    build_autograder(ASSIGNMENT, again, COURSE_ROOT)
    assert again.read_bytes() == autograder_zip.read_bytes()
    with zipfile.ZipFile(autograder_zip) as archive:
        names = set(archive.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in archive.infolist()}
        config = json.loads(archive.read("autograder.json"))
        pins = archive.read("requirements.txt").decode().split()
        declared = tomllib.loads(archive.read("course/course.toml").decode())
    # the contract the graders draw from and the mistakes they name go with them
    assert declared["course"]["contract"] == "grader_tests/contract.toml"
    assert declared["course"]["misconceptions"] == "grader_tests/misconceptions.py"
    assert {"course/grader_tests/contract.toml", "course/grader_tests/misconceptions.py"} <= names
    assert {"setup.sh", "run_autograder", "requirements.txt", "autograder.json"} <= names
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    graders = {n for n in names if n.startswith("course/grader_tests/test_")}
    assert graders == {f"course/grader_tests/test_{f}.py" for f in ASSIGNMENTS[ASSIGNMENT].graded}
    assert "course/grader_tests/reference.py" in names and "course/course.toml" in names
    assert wheel_name() in names  # the engine: the same wheel every deployment installs
    assert not [n for n in names if n.startswith("course/attention_course")]
    assert not [
        n for n in names if n.startswith(("course/source", "course/release", "course/quiz"))
    ]
    assert config == {
        "assignment": ASSIGNMENT,
        "points": {
            "softmax": 10.0,
            "create_qkv": 5.0,
            "scaled_dot_product_attention": 15.0,
            "causal_mask": 5.0,
        },
        "engine": attention_course.__version__,
        "shown": {"result": "visible", "tests": "visible", "hints": True, "stdout": "hidden"},
        "late_penalty": "none",
    }
    import numpy

    assert f"numpy=={numpy.__version__}" in pins
    for script in ("setup.sh", "run_autograder"):
        path = tmp_path / script
        with zipfile.ZipFile(autograder_zip) as archive:
            path.write_bytes(archive.read(script))
        assert subprocess.run(["bash", "-n", str(path)]).returncode == 0, script


def test_cli_builds_the_zip_and_reports_bad_input(tmp_path):
    cli = [sys.executable, "-m", "attention_course.cli.main", "gradescope"]
    out = tmp_path / "autograder.zip"
    proc = subprocess.run([*cli, ASSIGNMENT, "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert zipfile.is_zipfile(out) and f"students submit {ASSIGNMENT}.ipynb" in proc.stdout
    proc = subprocess.run(
        [*cli, ASSIGNMENT, "--course", str(tmp_path), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "not a course folder" in proc.stderr
    proc = subprocess.run([*cli, "attention_quiz"], capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown assignment 'attention_quiz'" in proc.stderr
