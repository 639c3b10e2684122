"""The Gradescope autograder as an instructor deploys it: built by the installed engine's
`attention-course gradescope`, unzipped into a folder laid out as Gradescope lays out
/autograder, set up by its own setup.sh (a new venv: the zip's pinned requirements and the
engine wheel it carries), and run by its run_autograder on submitted notebooks.
"""

from __future__ import annotations

import json
import subprocess
import zipfile

import nbformat
import pytest

from attention_course.cli.samples import sample_notebooks
from tests.course import by_function
from tests.deploy.conftest import REPO_ROOT, clean_env

pytestmark = pytest.mark.deploy  # one venv for tests/deploy/ (tests/conftest.py GROUPS)

ASSIGNMENT = "attention_basics"
FULL = 35.0


@pytest.fixture(scope="module")
def autograder(engine_venv, tmp_path_factory):
    """(root, version): the zip built by the venv's command, unzipped into <root>/source and
    set up by its setup.sh into a venv of its own."""
    base = tmp_path_factory.mktemp("gradescope-deploy")
    zip_path = base / "ag.zip"
    proc = engine_venv.run(
        "attention-course", "gradescope", ASSIGNMENT, "--out", zip_path, "--course", REPO_ROOT
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    version = engine_venv.run("attention-course", "--version").stdout.split()[-1]
    root = base / "autograder"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
        for info in archive.infolist():  # extractall drops the modes: restore them
            (root / "source" / info.filename).chmod((info.external_attr >> 16) & 0o777)
    (root / "submission").mkdir()
    (root / "results").mkdir()
    venv = base / "gradescope-venv"
    setup = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")],
        cwd=root / "source",
        env=clean_env(ATTENTION_COURSE_VENV=str(venv)),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    assert f"setup: attention-course {version} grades {ASSIGNMENT}" in setup.stdout
    assert "bubblewrap can make a sandbox here" in setup.stdout, setup.stdout
    return root, venv, version


def run_autograder(autograder, submission: object) -> tuple[dict, str]:
    """Submit one notebook (or a str: a file's text) and run run_autograder as Gradescope does."""
    root, venv, _ = autograder
    for old in (root / "submission").iterdir():
        old.unlink()
    path = root / "submission" / f"{ASSIGNMENT}.ipynb"
    if isinstance(submission, str):
        path.write_text(submission)
    else:
        nbformat.write(submission, path)
    proc = subprocess.run(
        [str(root / "source" / "run_autograder")],
        cwd=root,
        env=clean_env(AUTOGRADER_ROOT=str(root), ATTENTION_COURSE_VENV=str(venv)),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    return results, proc.stdout


@pytest.fixture(scope="module")
def notebooks():
    return sample_notebooks(ASSIGNMENT, REPO_ROOT)


def test_the_zip_installs_its_own_engine(autograder):
    root, venv, version = autograder
    (site,) = venv.glob("lib/python3*/site-packages")
    assert (site / f"attention_course-{version}.dist-info").is_dir()
    assert (site / "attention_course" / "integrations" / "gradescope_run.py").is_file()
    pins = (root / "source" / "requirements.txt").read_text().split()
    assert pins and all("==" in pin for pin in pins), pins  # every requirement pinned


def test_the_instructors_notebook_gets_full_marks(autograder, notebooks):
    results, stdout = run_autograder(autograder, notebooks["demo-instructor"])
    version = autograder[2]
    assert results["score"] == FULL, results
    assert results["extra_data"]["max_score"] == FULL
    assert results["extra_data"]["engine"] == version
    assert f"graded by attention-course {version}" in stdout
    assert {name: t["status"] for name, t in by_function(results).items()} == {
        "softmax": "passed",
        "create_qkv": "passed",
        "causal_mask": "passed",
        "scaled_dot_product_attention": "passed",
    }


def test_a_wrong_notebook_gets_some_marks(autograder, notebooks):
    results, stdout = run_autograder(autograder, notebooks["demo-partial"])
    assert 0 < results["score"] < FULL, results
    failed = {name for name, t in by_function(results).items() if t["status"] == "failed"}
    assert {"softmax", "causal_mask"} <= failed
    assert results["extra_data"]["engine"] == autograder[2]
    assert "sandbox:" in stdout and "NONE" not in stdout.split("sandbox:")[1].splitlines()[0]


def test_an_invalid_notebook_gets_zero_and_the_reason(autograder, notebooks):
    results, stdout = run_autograder(autograder, notebooks["demo-broken"])
    assert results["score"] == 0
    assert "not valid notebook JSON" in results["output"], results["output"]
    assert all(t["score"] == 0 for t in results["tests"])
    assert sum(t["max_score"] for t in results["tests"]) == FULL
    assert results["extra_data"]["engine"] == autograder[2]
    assert f"graded by attention-course {autograder[2]}" in stdout
