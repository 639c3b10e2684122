"""`attention-course check`: a table or Gradescope's results.json, the assignment found itself."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import nbformat
import pytest

from attention_course.cli.samples import sample_notebooks
from tests.content.test_notebooks import cell_points
from tests.course import ASSIGNMENTS, COURSE_ROOT, by_function


def run_check(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "check", *map(str, args)],
        capture_output=True,
        text=True,
        input=stdin,
    )


@pytest.fixture(scope="module")
def instructor_notebooks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("check")
    paths = {}
    for assignment in ASSIGNMENTS:
        path = folder / f"{assignment}.ipynb"
        nbformat.write(sample_notebooks(assignment, COURSE_ROOT)["demo-instructor"], path)
        paths[assignment] = path
    return paths


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_json_is_gradescope_results_format(instructor_notebooks, assignment):
    proc = run_check(instructor_notebooks[assignment], "--json")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert results["score"] == results["max_score"] > 0
    assert results["output_format"] == results["test_output_format"] == "text"
    functions = list(dict.fromkeys(t["tags"][0] for t in results["tests"]))
    assert functions == list(ASSIGNMENTS[assignment].graded)  # one entry per grader test
    for test in results["tests"]:
        assert set(test) >= {"name", "score", "max_score", "output", "visibility"}
        assert test["name"].startswith(f"{test['tags'][0]}: ")
        assert test["score"] == test["max_score"]
        assert test["output"].startswith("PASS [") and "FAIL" not in test["output"]
    assert sum(t["max_score"] for t in results["tests"]) == results["max_score"]


def test_table_names_every_function_and_the_total(instructor_notebooks):
    proc = run_check(instructor_notebooks["attention_basics"])
    assert proc.returncode == 0, proc.stderr
    for function in ASSIGNMENTS["attention_basics"].graded:
        assert function in proc.stdout
    full = sum(cell_points("attention_basics").values())  # the test cells' points
    assert re.search(rf"total\s+{full:g} / {full:g}\n", proc.stdout), proc.stdout


def test_assignment_found_from_test_cells_when_renamed(instructor_notebooks, tmp_path):
    """A student's renamed copy (no metadata naming it) is still recognised."""
    nb = nbformat.read(instructor_notebooks["masks_and_heads"], as_version=4)
    nb.metadata.pop("attention_course", None)
    path = tmp_path / "my homework (1).ipynb"
    nbformat.write(nb, path)
    results = json.loads(run_check(path, "--json").stdout)
    assert list(by_function(results)) == list(ASSIGNMENTS["masks_and_heads"].graded)


def test_assignment_found_from_file_name(tmp_path):
    """Without nbgrader metadata the file name decides; such a notebook is graded cell by
    cell from the code cells that define functions."""
    source = "import numpy as np\n\ndef causal_mask(seq_len):\n    i = np.arange(seq_len)\n"
    source += "    return i[None, :] > i[:, None]\n"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source), nbformat.v4.new_code_cell("causal_mask(3)")]
    path = tmp_path / "attention_basics.ipynb"
    nbformat.write(nb, path)
    results = json.loads(run_check(path, "--json").stdout)
    scores = {name: (t["score"], t["max_score"]) for name, t in by_function(results).items()}
    assert scores["causal_mask"][0] == scores["causal_mask"][1] > 0
    assert scores["softmax"][0] == 0


def test_assignment_flag_overrides(instructor_notebooks):
    proc = run_check(instructor_notebooks["attention_basics"], "--assignment", "masks_and_heads")
    assert proc.returncode == 0
    assert "self_attention" in proc.stdout


def test_unknown_assignment_flag_is_a_usage_error(instructor_notebooks):
    proc = run_check(instructor_notebooks["attention_basics"], "--assignment", "nope")
    assert proc.returncode == 2 and "unknown assignment 'nope'" in proc.stderr


@pytest.mark.parametrize(
    "name, content, extra, words",
    [
        ("hw.ipynb", '{"cells": [ not json', [], "not valid notebook JSON (line 1"),
        ("hw.ipynb", "[1, 2]", [], "not a Jupyter notebook (no list of cells)"),
        ("hw.ipynb", b"\xff\xfe\x00", [], "cannot be read (UnicodeDecodeError)"),
        ("hw.ipynb", None, [], "no such file"),
        ("hw.py", "def softmax(x): pass\n", [], "expected a Jupyter notebook (.ipynb)"),
        ("hw.ipynb", '{"cells": []}', [], "cannot tell which assignment this notebook is"),
        ("attention_basics.ipynb", '{"cells": []}', ["--seed", "xyz"], "--seed: "),
        ("attention_basics.ipynb", '{"cells": []}', ["--seed", "ab" * 16], "shown to every"),
    ],
)
def test_a_bad_notebook_or_option_is_one_line_and_exit_2(tmp_path, name, content, extra, words):
    """Read before anything is imported or started for grading: one line, exit 2."""
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    proc = run_check(path, *extra)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("attention-course: error: ") and words in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stdout == "", proc.stderr


# What a hostile student's exception says to a terminal: a window title, a clipboard write
# (OSC 52), a screen clear, a cursor move and a fake verdict.
ESCAPES = "\x1b]0;owned\x07\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b[H ALL TESTS PASSED 35/35\r"


def test_escape_bytes_in_a_students_exception_never_reach_the_terminal(tmp_path):
    """`check` in text mode quotes what softmax raised as the characters it is: no byte of an
    escape sequence (nor a carriage return) reaches the terminal, and the text is still there
    for the student to read, escaped."""
    source = f"def softmax(z, axis=-1):\n    raise ValueError({ESCAPES!r})\n"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    path = tmp_path / "attention_basics.ipynb"
    nbformat.write(nb, path)
    proc = run_check(path, "--seed", "-", stdin="0123456789abcdef" * 2 + "\n")  # (not in ps)
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout + proc.stderr
    assert "ALL TESTS PASSED" in shown, shown  # quoted to the student...
    assert "\x1b" not in shown and "\r" not in shown and "\x07" not in shown  # ...inert
    assert "\\x1b]52;c;" in shown
