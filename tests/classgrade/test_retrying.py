"""The retries of a grading job (classgrade/jobs.py Retrying): a submission whose grading met a
transient fault waits its back-off (0.5, 1, 2, ... seconds, at most `longest`), is due again
once that time has passed and not before, and after its last try is a fault of grading."""

from __future__ import annotations

import time

from attention_course.classgrade.jobs import Retrying
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
