"""A course folder that lies inside a folder the sandbox mounts is hidden from student code.

The sandbox mounts the Python installation (and /usr) read-only; the course folder is never
mounted itself, but an instructor's course may lie inside one of those (a course kept next to
its Python environment, in /usr/local/share, ...). nbgrader's preprocessors name the course of
the submission they grade (`graded_course`, from autograded/<student>/<assignment>/), and the
sandbox covers it. Test courses usually live under /tmp, which the sandbox replaces by a private
one anyway, so this course copy lies under /var/tmp, inside a folder made to look like part of
the Python installation. So do a course's quiz banks (its answer keys) where they lie outside
the course, and the engine's own folder: both are hidden from grading and from the notebook run.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.grading.preprocessors import GradeOutOfKernel, SandboxedExecute
from attention_course.sandbox import jail
from tests.course import COURSE_ROOT, graded_course

ASSIGNMENT = "attention_basics"

STEAL = """
import json
try:
    source = json.load(open({path!r}))
    stolen = next(c["source"] for c in source["cells"] if c.get("id") == "softmax")
    exec("".join(stolen))
    print("STOLEN from the course")
except OSError as exc:
    print("nothing to read:", type(exc).__name__)
    def softmax(z, axis=-1):
        raise NotImplementedError()
"""


def test_graded_course_is_the_root_of_the_working_folder(tmp_path):
    course = copy_course(tmp_path / "course", COURSE_ROOT)
    folder = course / "autograded" / "someone" / ASSIGNMENT
    assert graded_course(folder) == [course]
    assert graded_course(tmp_path / "elsewhere" / "a" / "b") == []  # not a course folder


@pytest.fixture
def course_in_python(monkeypatch):
    """A course copy under /var/tmp, in a folder the sandbox mounts like the Python
    installation."""
    base = Path(tempfile.mkdtemp(prefix="attention-hiding-", dir="/var/tmp"))
    base.chmod(0o755)  # readable by everybody, as a shared installation is
    try:
        course = copy_course(base / "course", COURSE_ROOT)
        real = jail.python_paths
        monkeypatch.setattr(jail, "python_paths", lambda: [*real(), str(base)])
        yield course
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _notebook(course: Path):
    """The instructor's notebook with softmax's solution replaced by the theft (the source, as
    nbgrader grades it: every locked cell restored, the hidden grader lines included)."""
    path = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "softmax":
            cell.source = STEAL.format(path=str(path))
    return nb


def test_student_code_cannot_read_a_course_inside_a_mounted_folder(course_in_python):
    course = course_in_python
    nb = _notebook(course)
    resources = {
        "nbgrader": {"assignment": ASSIGNMENT, "notebook": ASSIGNMENT, "student": "thief"},
        "metadata": {"path": str(course / "autograded" / "thief" / ASSIGNMENT)},
    }
    nb, resources = SandboxedExecute().preprocess(nb, resources)
    nb, resources = GradeOutOfKernel().preprocess(nb, resources)
    outputs = json.dumps([c.get("outputs", []) for c in nb.cells])
    assert "STOLEN" not in outputs
    assert "nothing to read" in outputs  # the notebook run tried, and found nothing
    graded = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}
    score = graded["softmax_tests"].outputs[-1]["data"]["text/plain"]
    assert float(score) == 0.0, graded["softmax_tests"].outputs[0]["text"]


def test_the_same_theft_works_where_the_course_is_readable(tmp_path):
    """The theft itself works (so the test above shows hiding, not a broken theft): run
    without the sandbox, where the course can be read, it gets softmax's full marks."""
    course = copy_course(tmp_path / "course", COURSE_ROOT)
    nb = _notebook(course)
    resources = {
        "nbgrader": {"assignment": ASSIGNMENT, "notebook": ASSIGNMENT, "student": "thief"},
        "metadata": {"path": str(course / "autograded" / "thief" / ASSIGNMENT)},
    }
    nb, _ = GradeOutOfKernel(unsandboxed=True).preprocess(nb, resources)
    graded = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}
    score = float(graded["softmax_tests"].outputs[-1]["data"]["text/plain"])
    points = float(graded["softmax_tests"].metadata["nbgrader"]["points"])
    assert score == points > 0
    assert COURSE_ROOT not in course.parents


ENGINE = Path(jail.__file__).resolve().parent.parent  # the engine's own folder
LOOK = """
import json, os

def look():
    def listing(path):
        return sorted(os.listdir(path))[:5] if os.path.isdir(path) else None
    return json.dumps({{"banks": listing({banks!r}), "engine": listing({engine!r}),
                       "shared": listing({shared!r}),
                       "beside": os.path.exists(os.path.join({beside!r}, "course.toml"))}})
"""  # (formatted with the paths; a few names each: a value comes back within 500 characters)


@pytest.fixture
def banks_in_python(monkeypatch):
    """A course copy under /var/tmp whose quiz banks (answer keys) lie elsewhere, in a folder
    mounted like the Python installation; and the folder holding the engine mounted too."""
    base = Path(tempfile.mkdtemp(prefix="attention-hiding-", dir="/var/tmp"))
    base.chmod(0o755)
    try:
        course = copy_course(base / "course", COURSE_ROOT)
        shared = base / "shared"
        shared.mkdir(mode=0o755)
        shutil.move(course / "quiz" / "banks", shared / "banks")
        toml = course / "course.toml"
        toml.write_text(
            toml.read_text().replace('banks = "quiz/banks"', f'banks = "{shared}/banks"')
        )
        real = jail.python_paths
        mounted = [str(shared), str(ENGINE.parent)]
        monkeypatch.setattr(jail, "python_paths", lambda: [*real(), *mounted])
        yield course, shared / "banks"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _seen(text: str) -> dict:
    seen = json.loads(text)
    assert seen["shared"] == ["banks"], seen  # the folder is mounted: the banks' mount point
    assert seen["beside"] is True, seen  # the folder holding the engine is mounted too
    return seen


def test_quiz_banks_and_the_engine_are_hidden_inside_a_mounted_folder(banks_in_python):
    """What grading runs (a program run, hiding what Course.hidden names) and what nbgrader runs
    (the notebook run of a submission of that course) see neither the banks nor the engine."""
    from attention_course.course import Course
    from attention_course.sandbox.program import Call, run_program

    course, banks = banks_in_python
    assert sorted(p.name for p in banks.glob("*.yaml"))  # the keys are there, outside
    hidden = Course.load(course).hidden()
    look = LOOK.format(
        banks=str(banks), engine=str(ENGINE), shared=str(banks.parent), beside=str(ENGINE.parent)
    )
    run = run_program([("look", look)], [Call("look", "look")], hide=hidden)
    graded = _seen(run.outcomes["look"].value)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(look + "\nprint(look())")])
    resources = {"metadata": {"path": str(course / "autograded" / "someone" / ASSIGNMENT)}}
    nb, _ = SandboxedExecute().preprocess(nb, resources)
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    notebook = _seen(text.strip().splitlines()[-1])
    for run_of, seen in (("grading", graded), ("the notebook", notebook)):
        assert seen["banks"] == [] and seen["engine"] == [], (run_of, seen)
