"""A fault of grading is never a student's outcome: no points, no zero, a grading error.

A grader that raises anything but its own `Fail` (a bare assert included), a grader file that
does not import, a grading worker that cannot start, a function that no grader test ran, a
report that cannot be read and a grading process that ends with an unexpected status each make
`grade_file` raise GradingError, both in process (grading jobs, `check`) and in a pytest process
of its own (plain nbgrader). `check` turns it into a one-line error (exit 2); `autograde` into
the status "error" for that submission: nothing recorded, graded again by the next run, exit 1.

The faults are made by the tests: a grader function or the sandbox replaced in this process, and
in the pytest process a plugin (PYTEST_PLUGINS) that does the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attention_course.grading import course_graders
from attention_course.grading import runner as run_graders
from attention_course.grading.graders import GradingError, grade_file
from attention_course.sandbox import confined
from tests.course import COURSE, COURSE_ROOT, REFERENCE_FILE

SEED = "fa" * 16  # the seed these gradings use


def causal_mask_grader():
    """The causal_mask grader module (imported once per process, whatever the seed)."""
    return run_graders.load(COURSE, "causal_mask")[0]


ASSIGNMENT = "attention_basics"


def _raise(exc: BaseException):
    def raiser(*args, **kwargs):
        raise exc

    return raiser


@pytest.fixture
def stub(tmp_path):
    """The released attention_basics, untouched: what a student who did nothing hands in."""
    released = COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    path.write_bytes(released.read_bytes())
    return path


def _grade_here(path, functions=("causal_mask",)):
    return grade_file(path, ASSIGNMENT, functions=list(functions), in_process=True, seed=SEED)


# --------------------------------------------------------------------------- in process


def test_the_stub_is_graded_normally(stub):
    """Without a fault, the same calls give the stub its honest zero (so the faults below are
    what turns it into an error)."""
    report = _grade_here(stub, ("softmax", "causal_mask"))
    assert report.score == 0 and report.max_score > 0


@pytest.mark.parametrize(
    "exc",
    [KeyError("a grader bug"), AssertionError("a bare assert in a grader")],
    ids=["grader-crash", "bare-assert"],
)
def test_a_grader_that_raises_is_a_fault(monkeypatch, exc):
    monkeypatch.setattr(causal_mask_grader(), "expect_shape", _raise(exc))
    with pytest.raises(GradingError, match="not the student's fault") as found:
        _grade_here(REFERENCE_FILE)
    assert "causal_mask::test_" in str(found.value) and type(exc).__name__ in str(found.value)


def test_the_error_names_the_first_five_faults(monkeypatch):
    softmax_grader, tests = run_graders.load(COURSE, "softmax")
    assert len(tests) > 5
    monkeypatch.setattr(softmax_grader, "expect_close", _raise(KeyError("a grader bug")))
    with pytest.raises(GradingError) as found:
        _grade_here(REFERENCE_FILE, ("softmax",))
    named = str(found.value).split("(not the student's fault): ")[1].split("; ")
    assert [n.split(":")[2] for n in named] == [t.name for t in tests[:5]]


def test_a_worker_that_cannot_start_is_a_fault(stub, monkeypatch):
    """The sandbox cannot start a worker (a fault of the machine): before, an untouched stub
    scored full marks on softmax that way."""
    monkeypatch.setattr(confined.Confined, "start", _raise(confined.Died("no sandbox today")))
    with pytest.raises(GradingError, match="did not start: no sandbox today"):
        _grade_here(stub, ("softmax", "causal_mask"))


def test_a_grader_file_that_does_not_import_is_a_fault(stub, monkeypatch):
    name = f"{course_graders.package(COURSE)}.test_causal_mask"
    monkeypatch.setitem(sys.modules, name, None)  # import fails
    with pytest.raises(GradingError, match="test_causal_mask.py: could not be collected"):
        _grade_here(stub, ("softmax", "causal_mask"))


def test_a_function_no_grader_test_ran_for_is_a_fault(stub, monkeypatch):
    tests_of = run_graders.tests_of
    monkeypatch.setattr(
        run_graders, "tests_of", lambda module, f: [] if f == "causal_mask" else tests_of(module, f)
    )
    with pytest.raises(GradingError, match="no grader test ran for causal_mask"):
        _grade_here(REFERENCE_FILE, ("softmax", "causal_mask"))


CRASHING = """

def causal_mask(seq_len):
    import os
    os._exit(0)

raise ValueError("a stray line at the end")
"""


def test_a_students_cell_error_and_crashed_worker_are_in_the_report(tmp_path):
    """The student's own faults are outcomes, not faults of grading: the report names them."""
    path = tmp_path / "crashing.py"
    path.write_text(REFERENCE_FILE.read_text() + CRASHING)
    report = _grade_here(path)
    assert [e["error_type"] for e in report.cell_errors] == ["ValueError"]
    assert report.notes == ["causal_mask ended with exit code 0 (os._exit or a crash?)"]
    assert report.score == 0 and report.max_score > 0


# --------------------------------------------------------------------------- pytest process

PLUGIN = '''
"""Faults for the grader pytest process, chosen by ATTENTION_COURSE_TEST_FAULT."""
import os
from pathlib import Path

FAULT = os.environ.get("ATTENTION_COURSE_TEST_FAULT", "")


def pytest_configure(config):
    if FAULT == "worker":
        from attention_course.sandbox import confined

        def start(self, deadline):
            raise confined.Died("no sandbox today")

        confined.Confined.start = start


def pytest_collection_modifyitems(config, items):
    ours = [i for i in items if "test_causal_mask" in i.nodeid]
    if FAULT == "crash":
        def crash(student):
            raise KeyError("a grader bug")

        ours[0].obj = crash
    if FAULT == "untested":
        items[:] = [i for i in items if i not in ours]


def pytest_runtest_teardown(item, nextitem):
    if FAULT == "teardown" and "test_causal_mask" in item.nodeid:
        raise RuntimeError("a clean-up failed")


def pytest_unconfigure(config):
    report = Path(config.getoption("--report"))
    if FAULT == "garbled":
        report.write_text("{")
    if FAULT == "status":  # ended badly after a report that looks fine
        os._exit(3)
'''


@pytest.fixture
def fault_plugin(tmp_path, monkeypatch):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "grading_fault_plugin.py").write_text(PLUGIN)
    monkeypatch.setenv("PYTHONPATH", str(folder))
    monkeypatch.setenv("PYTEST_PLUGINS", "grading_fault_plugin")

    def choose(fault: str) -> None:
        monkeypatch.setenv("ATTENTION_COURSE_TEST_FAULT", fault)

    return choose


@pytest.mark.parametrize(
    "fault, words",
    [
        ("none", None),
        ("crash", "causal_mask::test_.*: KeyError"),
        ("worker", "did not start: no sandbox today"),
        ("untested", "no grader test ran for causal_mask"),
        ("teardown", "test_causal_mask.py::test_.*: teardown: RuntimeError: a clean-up failed"),
        ("garbled", r"not the student's fault\): \d+ passed"),  # pytest's last line
        ("status", "not the student's fault"),
    ],
)
def test_faults_in_the_grader_pytest_process(stub, fault_plugin, fault, words):
    fault_plugin(fault)
    if words is None:  # the plugin alone changes nothing
        report = grade_file(
            stub, ASSIGNMENT, functions=["softmax", "causal_mask"], in_process=False
        )
        assert report.score == 0 and report.max_score > 0
        return
    path = REFERENCE_FILE if fault in ("garbled", "status") else stub  # all passed, then this
    with pytest.raises(GradingError, match=words):
        grade_file(path, ASSIGNMENT, functions=["softmax", "causal_mask"], in_process=False)


# --------------------------------------------------------------------------- check and autograde


def test_check_says_it_in_one_line_and_exits_2(stub, monkeypatch, capsys):
    from attention_course.cli import main as cli
    from attention_course.grading import graders as grading

    monkeypatch.setattr(grading, "limit_grader_memory", lambda: None)  # not this test process
    monkeypatch.setattr(confined.Confined, "start", _raise(confined.Died("no sandbox today")))
    assert cli.main(["check", str(stub), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "not the student's fault" in err and "Traceback" not in err


SITECUSTOMIZE = """
import os

if os.environ.get("ATTENTION_COURSE_TEST_FAULT") == "worker":
    from attention_course.classgrade import job

    serve = job.serve

    def serve_without_sandbox(root, unsandboxed):  # a grading job's, not the command's
        from attention_course.sandbox import confined

        def start(self, deadline):
            raise confined.Died("no sandbox today")

        confined.Confined.start = start
        serve(root, unsandboxed)

    job.serve = serve_without_sandbox
"""


def test_autograde_records_no_score_and_grades_it_next_time(tmp_path_factory):
    """A class run (the command, its jobs forked from it) whose grading jobs cannot start a
    sandbox: the submission is an error (exit 1), not a score, nothing is recorded for it, and
    the next run grades it."""
    from attention_course.classgrade.nbgrader_api import copy_course, gradebook_scores
    from attention_course.classgrade.run import STATE_DIR
    from attention_course.cli.samples import fill

    root = copy_course(tmp_path_factory.mktemp("faults") / "course", COURSE_ROOT)
    folder = root / "submitted" / "idle" / ASSIGNMENT
    folder.mkdir(parents=True)
    released = root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nbformat.write(fill(released, {}), folder / f"{ASSIGNMENT}.ipynb")
    site = tmp_path_factory.mktemp("site")
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    command = [str(Path(sys.executable).parent / "attention-course"), "autograde", ASSIGNMENT]
    command += ["--course", str(root), "--jobs", "1", "--no-feedback"]

    faulty = subprocess.run(
        command, capture_output=True, text=True, env=dict(env, ATTENTION_COURSE_TEST_FAULT="worker")
    )
    assert faulty.returncode == 1, faulty.stdout + faulty.stderr
    said = faulty.stdout + faulty.stderr
    assert "idle" in said and "not the student's fault" in said and "no sandbox today" in said
    assert not (root / STATE_DIR / ASSIGNMENT / "idle.json").exists()  # nothing recorded
    assert _auto_scores(root, "idle") == {None}  # no score, as nbgrader leaves a failed one

    again = subprocess.run(command, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    recorded = json.loads((root / STATE_DIR / ASSIGNMENT / "idle.json").read_text())
    assert recorded["status"] == "graded" and recorded["total"] == 0
    assert gradebook_scores(ASSIGNMENT, root)["idle"]["total"] == 0
    assert _auto_scores(root, "idle") == {0.0}  # now a zero given by grading


def _auto_scores(root, student) -> set:
    from attention_course.classgrade.nbgrader_api import _gradebook

    with _gradebook(root) as gb:
        sub = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        return {g.auto_score for g in sub.grades}
