"""With the engine installed from its wheel into site-packages, student code graded by the
venv's `attention-course check` reads no answer: not the course's reference or graders, not
the source notebook (the solutions), not the quiz's banks, not the installed engine's files,
and it cannot import the graders. The course lies under /var/tmp (the sandbox gives student
code a /tmp of its own, which would hide a course under /tmp by accident), or inside the venv
itself, a folder the sandbox mounts for Python. The same notebook checked --unsandboxed reads
them all: the probe works, so finding nothing is the sandbox's doing.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.cli.samples import fill
from tests.course import by_function
from tests.deploy.conftest import REPO_ROOT

pytestmark = pytest.mark.deploy  # one venv for tests/deploy/ (tests/conftest.py GROUPS)

ASSIGNMENT = "attention_basics"

# The solution cell of softmax: it reports every answer it could read or import in the
# message of an exception (which the feedback of softmax shows), and defines no softmax.
PROBE = """import glob, json, os
COURSE, SITE = {course!r}, {site!r}
seen = []  # short labels: the feedback shows the start of the message only
def read(label, path):
    try:
        with open(path, "rb") as f:
            f.read(1)
        seen.append(label)
    except OSError:
        pass
read("reference", COURSE + "/grader_tests/reference.py")
read("grader", COURSE + "/grader_tests/test_softmax.py")
read("solutions", COURSE + "/source/{assignment}/{assignment}.ipynb")
read("formulas", COURSE + "/quiz/formulas.py")
for name in {banks!r}:
    read("bank", COURSE + "/quiz/banks/" + name)
if glob.glob(COURSE + "/quiz/banks/*.yaml") + glob.glob(COURSE + "/grader_tests/*.py"):
    seen.append("listed the course")
for name in {engine!r}:
    read("engine", SITE + "/attention_course/" + name)
if glob.glob(SITE + "/attention_course/*/*.py"):
    seen.append("listed the engine")
for module in ("grader_tests", "reference", "grader_tests.reference"):
    try:
        __import__(module)
        seen.append("import " + module)
    except Exception:
        pass
raise RuntimeError("seen: " + json.dumps(sorted(set(seen))))
"""


def probe_notebook(course: Path, site: Path):
    banks = sorted(p.name for p in (course / "quiz" / "banks").glob("*.yaml"))
    engine = ["__init__.py", "grading/graders.py", "integrations/wheel.py", "course.py"]
    assert banks and all((site / "attention_course" / name).is_file() for name in engine)
    source = PROBE.format(
        course=str(course), site=str(site), assignment=ASSIGNMENT, banks=banks, engine=engine
    )
    return fill(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", {"softmax": source})


def seen(engine_venv, course: Path, *flags: str) -> list[str]:
    """What the probe's softmax cell found, graded by the venv's `check --json`."""
    import nbformat

    path = engine_venv.workdir / f"{ASSIGNMENT}.ipynb"
    nbformat.write(probe_notebook(course, engine_venv.site_packages), path)
    proc = engine_venv.run("attention-course", "check", path, "--json", "--course", course, *flags)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(proc.stdout)
    softmax = by_function(results)["softmax"]
    assert softmax["score"] == 0
    marker = "raised RuntimeError: seen: "
    assert marker in softmax["output"], softmax["output"]
    return json.loads(softmax["output"].split(marker, 1)[1].splitlines()[0])


@pytest.fixture(params=["var-tmp", "inside-the-venv"])
def course(request, engine_venv):
    if request.param == "var-tmp":
        base = Path(tempfile.mkdtemp(prefix="attention-installed-hiding-", dir="/var/tmp"))
    else:
        base = Path(tempfile.mkdtemp(prefix="course-", dir=engine_venv.path / "share"))
    base.chmod(0o755)  # readable by everybody, as a shared installation is
    try:
        yield copy_course(base / "course", REPO_ROOT)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_student_code_reads_no_answer(engine_venv, course):
    assert seen(engine_venv, course) == []


def test_the_probe_finds_the_answers_without_the_sandbox(engine_venv, course):
    found = seen(engine_venv, course, "--unsandboxed")
    assert {"reference", "grader", "solutions", "formulas", "bank"} <= set(found), found
    assert {"listed the course", "engine", "listed the engine"} <= set(found), found
