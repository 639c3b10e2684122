"""The retries of a grading job (classgrade/jobs.py Retrying): a submission whose grading met a
transient fault waits its back-off (0.5, 1, 2, ... seconds, at most `longest`), is due again
once that time has passed and not before, and after its last try is a fault of grading; what
a run does with a reply that met such a fault (jobs.finished)."""

from __future__ import annotations

import time

from attention_course.classgrade import outcomes
from attention_course.classgrade.jobs import ClassRun, Retrying, State, finished
from attention_course.settings import Retries


def test_a_retry_waits_its_back_off_and_is_due_only_then():
    retrying = Retrying(Retries(attempts=3, first=0.2, longest=0.3))
    assert retrying.wait() is None and retrying.next() is None  # nothing waits
    before = time.monotonic()
    assert retrying.later("ada") == 0.2
    waited = retrying.wait()
    assert waited is not None and 0.0 < waited <= 0.2
    assert retrying.next() is None  # not due yet
    time.sleep(0.2 - (time.monotonic() - before) + 0.02)
    assert retrying.wait() == 0.0
    assert retrying.next() == "ada"
    assert retrying.next() is None and retrying.wait() is None  # taken off the list


def test_the_back_off_doubles_up_to_its_longest_then_the_tries_run_out():
    retrying = Retrying(Retries(attempts=3, first=0.2, longest=0.3))
    assert [retrying.later("ada") for _ in range(4)] == [0.2, 0.3, 0.3, None]
    assert retrying.later("bob") == 0.2  # counted per submission


def test_the_earliest_due_is_graded_first():
    retrying = Retrying(Retries(attempts=2, first=0.05, longest=10.0))
    retrying.later("late")
    retrying.later("late")  # 0.1 s
    retrying.later("soon")  # 0.05 s
    time.sleep(0.15)
    assert [retrying.next(), retrying.next(), retrying.next()] == ["soon", "late", None]


def _told():
    said: list[tuple[str, str, str]] = []
    return said, lambda kind, student, outcome: said.append((kind, student, outcome.reason))


def test_a_transient_fault_waits_still_claimed_then_is_a_fault_of_grading_not_recorded(tmp_path):
    """A job's reply that met a transient fault (the gradebook did not answer): with tries
    left it is told as a retry and waits, still claimed, nothing recorded; once they run out
    it is a fault of grading, told, let go and still not recorded."""
    state = State(tmp_path, "a1")
    run = ClassRun("a1", {})
    prints = {"ada": "f" * 64}
    said, tell = _told()
    again = Retrying(Retries(attempts=1, first=0.2, longest=0.2))
    reply = {"student": "ada", "graded": False, "fault": True, "side": outcomes.TRANSIENT,
             "seconds": 0.0, "reason": "the gradebook did not answer"}  # fmt: skip
    assert state.lock("ada")
    finished(run, reply, state, prints, tell, again)
    assert said == [("retry", "ada", "the gradebook did not answer; trying again in 0.2 s")]
    assert "ada" not in run.outcomes and "ada" in state.locks and state.last("ada") == {}
    finished(run, reply, state, prints, tell, again)  # its one retry met the fault again
    assert said[1:] == [("done", "ada", "the gradebook did not answer")]
    assert run.outcomes["ada"].status == "error" and not run.ok
    assert "ada" not in state.locks and state.last("ada") == {}
    state.close()


def test_a_graded_submission_whose_feedback_was_not_written_keeps_its_score_and_says_so(
    tmp_path,
):
    state = State(tmp_path, "a1")
    run = ClassRun("a1", {})
    said, tell = _told()
    reply = {"student": "bob", "graded": True, "total": 7.5, "seconds": 1.0,
             "feedback_error": "disk full"}  # fmt: skip
    assert state.lock("bob")
    finished(run, reply, state, {"bob": "e" * 64}, tell, Retrying())
    got = run.outcomes["bob"]
    assert (got.status, got.total, got.reason) == ("graded", 7.5, "feedback not written: disk full")
    assert state.last("bob")["total"] == 7.5 and "bob" not in state.locks
    assert said == [("done", "bob", "feedback not written: disk full")]
