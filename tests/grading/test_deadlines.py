"""One absolute deadline per submission, however many sandboxes grading starts for it.

A program run that could not run is not run again by every grader test; every program run of
a submission (the pasted-helpers retry included) shares its one deadline; once it is spent, the
remaining tests fail at once with the reason, as the student's outcome; and a submission whose
every function hangs (each kills its worker, each grader test would start another) is graded
within its time plus a small slack, measured across all its sandboxes. Also through a pytest
process of graders (it gets the deadline as a wall-clock time).
"""

from __future__ import annotations

import time

from attention_course.grading import graders
from attention_course.grading import runner as run_graders
from attention_course.sandbox import program
from attention_course.sandbox.program import Limits, SandboxError, run_program, used_up
from tests.course import COURSE, REFERENCE_FILE

HANGING = """

# ---- every function of masks_and_heads hangs, ignoring its alarm ----
import signal as _signal, time as _time

_time.sleep(1.0)  # a slow cell, within its limits: every fresh worker runs it again


def _hang(*args, **kwargs):
    _signal.signal(_signal.SIGALRM, _signal.SIG_IGN)
    _time.sleep(600)


self_attention = cross_attention = split_heads = combine_heads = _hang
multi_head_attention = attention_cost = _hang
"""

MASKS = COURSE.assignment("masks_and_heads").graded


def test_a_program_that_could_not_run_is_not_run_again_for_every_test(tmp_path, monkeypatch):
    """The grading worker fails to start: every test of the submission is that fault of
    grading, from one attempt (not one new sandbox, and one new deadline, per test)."""
    runs = []

    def failing(*args, **kwargs):
        runs.append(time.monotonic())
        raise SandboxError("the grading worker did not start: no sandbox today")

    monkeypatch.setattr(run_graders, "run_program", failing)
    path = tmp_path / "solution.py"
    path.write_text(REFERENCE_FILE.read_text())
    report = run_graders.grade(COURSE, path, list(MASKS))
    assert len(report["faults"]) > 10  # one per test that reads the student's results
    assert all("no sandbox today" in fault for fault in report["faults"])
    assert len(runs) == 1


def test_every_program_run_of_a_submission_shares_its_deadline(tmp_path, monkeypatch):
    """Every function hangs: workers are killed and restarted until the submission's time is
    spent, then the rest fails at once, the retry with the course's helpers included."""
    limits = Limits(submission_timeout=6.0, call_timeout=0.5, grace=0.5)
    deadlines = []

    def recording(*args, **kwargs):
        deadlines.append(kwargs["deadline"])
        return run_program(*args, **kwargs)

    monkeypatch.setattr(run_graders, "run_program", recording)
    path = tmp_path / "hanging.py"
    path.write_text(REFERENCE_FILE.read_text() + HANGING)
    start = time.monotonic()
    report = run_graders.grade(COURSE, path, list(MASKS), limits=limits)
    assert time.monotonic() - start < limits.submission_timeout + 8
    assert report["faults"] == []
    assert not any(t["passed"] for t in report["tests"] if t["points"] > 0)
    spent = [t for t in report["tests"] if used_up(limits) in t["message"]]
    assert spent, [t["message"] for t in report["tests"]]
    # the program, then a retry per set of functions computed outside (helpers, callees)
    assert len(deadlines) >= 2 and len(set(deadlines)) == 1


def test_the_graders_process_gets_the_submissions_deadline(tmp_path, monkeypatch):
    """grade_file's pytest process of graders: the deadline it was given is the one its
    program runs keep (the submission has no time left: every call fails at once, and no
    worker starts)."""
    monkeypatch.setattr(program, "submission_deadline", lambda limits: time.monotonic() - 1)
    monkeypatch.setattr(graders, "submission_deadline", lambda limits: time.monotonic() - 1)
    path = tmp_path / "solution.py"
    path.write_text(REFERENCE_FILE.read_text())
    start = time.monotonic()
    report = graders.grade_file(path, "attention_basics", functions=["softmax"], in_process=False)
    assert time.monotonic() - start < 60
    assert report.score == 0 and report.max_score > 0
    messages = {t.message for t in report.functions["softmax"].tests if t.points > 0}
    assert all(used_up(Limits()) in m for m in messages), messages
    assert report.notes == [f"grading stopped: {used_up(Limits())}"]
