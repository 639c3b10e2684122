"""A grading report adds up: a function's score is the points of the tests it passed (or the
partial points a quiz question earned), the feedback says PASS or FAIL with each test's points
and the hint of each failure, and the grader processes run under their own memory limit."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from attention_course.grading import graders as grading
from attention_course.grading.graders import (
    GRADER_MEMORY_BYTES,
    FunctionScore,
    GradeReport,
    _grader_limits,
)
from tests.course import COURSE_ROOT, REFERENCE_FILE


def _function() -> FunctionScore:
    return FunctionScore(
        "f",
        [
            grading.TestResult("test_a", "first property", 2.0, True, ""),
            grading.TestResult("test_b", "second property", 3.0, False, "the hint"),
            grading.TestResult("test_c", "a question", 4.0, False, "half right", partial=1.5),
            grading.TestResult("test_d", "third property", 0.5, True, "ignored when passed"),
        ],
    )


def test_scores_add_up():
    f = _function()
    assert [t.earned for t in f.tests] == [2.0, 0.0, 1.5, 0.5]
    assert f.score == 4.0 and f.max_score == 9.5
    report = GradeReport("a", {"f": f, "g": FunctionScore("g", [f.tests[1]])}, [], [])
    assert report.score == 4.0 and report.max_score == 12.5
    assert grading.TestResult("t", "d", 2.0, True, "", partial=0.0).earned == 0.0


def test_feedback_lines():
    assert _function().feedback().splitlines() == [
        "PASS [2 pt] first property",
        "FAIL [3 pt] second property",
        "     the hint",
        "FAIL [4 pt] a question",
        "     half right",
        "PASS [0.5 pt] third property",
    ]
    assert (
        FunctionScore("f", [grading.TestResult("t", "d", 1, False, "")]).feedback()
        == "FAIL [1 pt] d"
    )


def _limits_in_a_child(preexec=None, code: str = "") -> str:
    program = code + "import resource; print(resource.getrlimit(resource.RLIMIT_AS))"
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, preexec_fn=preexec
    ).stdout.strip()


def test_grader_processes_have_their_own_memory_limit():
    from attention_course.settings import DEFAULT, GiB

    # room to hold every reply of a submission (capped) next to the reference's own arrays
    assert GRADER_MEMORY_BYTES >= 4 * DEFAULT.program_result_bytes
    # the course's chosen limit (a policy value, not derived: changing it must be deliberate)
    assert GRADER_MEMORY_BYTES == 4 * GiB
    assert _limits_in_a_child(_grader_limits) == str((GRADER_MEMORY_BYTES, GRADER_MEMORY_BYTES))
    code = (
        "import ctypes, signal; sig = ctypes.c_int(); "
        "ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0); print(sig.value); "
    )
    assert _limits_in_a_child(_grader_limits, code).splitlines()[0] == str(9)  # SIGKILL


@pytest.mark.parametrize("soft", [None, GRADER_MEMORY_BYTES // 2, 2 * GRADER_MEMORY_BYTES])
def test_grading_in_process_lowers_the_memory_limit_never_raises_it(soft):
    def start():
        if soft is not None:
            resource.setrlimit(resource.RLIMIT_AS, (soft, resource.RLIM_INFINITY))

    code = (
        "from attention_course.grading.graders import limit_grader_memory; limit_grader_memory(); "
    )
    expected = GRADER_MEMORY_BYTES if soft is None else min(soft, GRADER_MEMORY_BYTES)
    got = _limits_in_a_child(start, code)
    assert got == str((expected, resource.RLIM_INFINITY)), got


def test_a_report_says_unsandboxed_only_when_told():
    """A report made without the flag (the quiz's, which runs no student code) does not tell
    the student that grading ran without the sandbox; one made with it does."""
    from attention_course.grading.feedback import UNSANDBOXED_NOTE, cell_feedback

    plain = GradeReport("a", {"f": _function()}, [], [])
    assert not plain.unsandboxed and UNSANDBOXED_NOTE not in cell_feedback(plain, "f")
    told = GradeReport("a", {"f": _function()}, [], [], unsandboxed=True)
    assert UNSANDBOXED_NOTE in cell_feedback(told, "f")


def test_a_cell_gets_its_share_of_points_and_nothing_without_tests():
    from attention_course.grading.feedback import cell_score

    report = GradeReport("a", {"f": _function(), "none": FunctionScore("none")}, [], [])
    assert cell_score(19.0, report, "f") == round(19.0 * 4.0 / 9.5, 6)  # 8.0
    assert cell_score(10.0, report, "none") == 0.0  # no test: no points (and grading refuses)


def test_graders_are_found_from_any_working_folder(monkeypatch, tmp_path):
    """Grading in process imports the graders from the course it is given, by path, whatever
    the working folder and the import path of the process that grades (`check` run from
    anywhere)."""
    from pathlib import Path

    from attention_course.course import Course
    from attention_course.grading.graders import grade_file

    monkeypatch.chdir(tmp_path)
    kept = [p for p in sys.path if Path(p or ".").resolve() != COURSE_ROOT]
    monkeypatch.setattr(sys, "path", kept)
    for name in ("grader_tests", "attention_course.grading.runner"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    report = grade_file(
        REFERENCE_FILE,
        "attention_basics",
        functions=["causal_mask"],
        in_process=True,
        course=Course.load(COURSE_ROOT),
    )
    assert report.score == report.max_score > 0
    assert "grader_tests" not in sys.modules  # imported by path, under a name of its own


def test_the_graders_pytest_process_sandboxes_the_worker_unless_told(tmp_path):
    """The worker the graders' pytest process starts is sandboxed (the course is out of sight)
    unless grading is asked to run unsandboxed, as the report then says."""
    from attention_course.grading.graders import grade_file

    program = tmp_path / "program.py"
    program.write_text(
        REFERENCE_FILE.read_text()
        + "\n\nimport os\n_mask = causal_mask\n\n\ndef causal_mask(seq_len):\n"
        + f"    if os.path.exists({str(REFERENCE_FILE)!r}):\n"
        + "        return ~_mask(seq_len)  # what only an unsandboxed worker returns\n"
        + "    return _mask(seq_len)\n"
    )
    sandboxed = grade_file(program, "attention_basics", functions=["causal_mask"], in_process=False)
    assert sandboxed.score == sandboxed.max_score and not sandboxed.unsandboxed
    loose = grade_file(
        program, "attention_basics", True, functions=["causal_mask"], in_process=False
    )
    assert loose.score < loose.max_score and loose.unsandboxed
