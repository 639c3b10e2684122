"""Checks with the hidden graders before the deadline, below the service: the limit per student
per assignment (in a real SQLite gradebook, and PostgreSQL's), the pending check, the fair
queue, the due-date policy, the settings and the records the instructor lists."""

from __future__ import annotations

import datetime
import threading
from dataclasses import replace

import pytest

from attention_course.errors import UserError
from attention_course.integrations.check_limits import (
    FAILED,
    GRADED,
    QUEUED,
    CheckRecord,
    CheckRecords,
    FairQueue,
    Refusal,
    due_decision,
    policy,
    readable,
)
from attention_course.settings import HUB_CHECK

NOW = 1_800_000_000.0  # Fri 15 Jan 2027, 08:00 UTC
SETTINGS = replace(HUB_CHECK, per_day=2, window=3600.0, pending_per_student=1)


@pytest.fixture
def records(tmp_path):
    found = CheckRecords(f"sqlite:///{tmp_path / 'gradebook.db'}?timeout=60")
    yield found
    found.close()


def taken(records, student, assignment, now, settings=SETTINGS, state=GRADED) -> CheckRecord:
    found = records.reserve(student, assignment, settings, now)
    assert isinstance(found, CheckRecord), found
    records.finish(found.id, state, now + 5, 3.0, 4.0, "PASS ...", "seed x")
    return found


def test_the_limit_counts_per_student_and_assignment_and_says_the_next_time(records):
    first = taken(records, "alice", "attention_basics", NOW)
    taken(records, "alice", "attention_basics", NOW + 600)
    refused = records.reserve("alice", "attention_basics", SETTINGS, NOW + 1200)
    assert isinstance(refused, Refusal)
    assert refused.next_allowed == first.requested + SETTINGS.window  # the oldest one leaves
    assert readable(refused.next_allowed) == "Fri 15 Jan 2027, 09:00 UTC"
    assert refused.text() == (
        "you have used the 2 checks of attention_basics allowed in 1 hour; "
        "your next check is allowed from Fri 15 Jan 2027, 09:00 UTC"
    )
    assert records.left("alice", "attention_basics", SETTINGS, NOW + 1200) == 0
    # another assignment, another student: their own counts
    assert isinstance(taken(records, "alice", "masks_and_heads", NOW + 1200), CheckRecord)
    assert isinstance(taken(records, "bob", "attention_basics", NOW + 1200), CheckRecord)
    # once the first has left the window, one more
    later = records.reserve("alice", "attention_basics", SETTINGS, NOW + SETTINGS.window + 1)
    assert isinstance(later, CheckRecord)


def test_a_check_failed_by_grading_is_not_counted(records):
    taken(records, "alice", "attention_basics", NOW, state=FAILED)
    taken(records, "alice", "attention_basics", NOW + 1)
    assert records.left("alice", "attention_basics", SETTINGS, NOW + 2) == 1
    assert isinstance(records.reserve("alice", "attention_basics", SETTINGS, NOW + 2), CheckRecord)


def test_one_pending_check_per_student(records):
    waiting = records.reserve("alice", "attention_basics", SETTINGS, NOW)
    assert isinstance(waiting, CheckRecord) and waiting.state == QUEUED
    refused = records.reserve("alice", "masks_and_heads", SETTINGS, NOW + 1)
    assert isinstance(refused, Refusal) and refused.next_allowed is None
    assert "still waiting" in refused.text()
    assert isinstance(records.reserve("bob", "attention_basics", SETTINGS, NOW + 1), CheckRecord)
    records.finish(waiting.id, GRADED, NOW + 2, 1.0, 4.0, "x", "y")
    assert isinstance(records.reserve("alice", "masks_and_heads", SETTINGS, NOW + 3), CheckRecord)


def test_a_service_stopped_mid_check_gives_the_check_back(records):
    waiting = records.reserve("alice", "attention_basics", SETTINGS, NOW)
    assert records.interrupted(NOW + 10) == 1
    record = records.get(waiting.id)
    assert record is not None and record.state == FAILED
    assert record.feedback is not None and "does not count" in record.feedback  # said so
    assert records.left("alice", "attention_basics", SETTINGS, NOW + 10) == 2


def test_the_checks_left_are_those_of_the_assignment_asked_about(records):
    """Checks of one assignment use none of another's: alice, with both of attention_basics
    used, still has both of masks_and_heads."""
    taken(records, "alice", "attention_basics", NOW)
    taken(records, "alice", "attention_basics", NOW + 1)
    assert records.left("alice", "attention_basics", SETTINGS, NOW + 2) == 0
    assert records.left("alice", "masks_and_heads", SETTINGS, NOW + 2) == 2
    assert records.left("bob", "attention_basics", SETTINGS, NOW + 2) == 2


def test_a_restart_fails_only_the_checks_left_pending(records):
    """A restarted service gives back the checks it never graded, and only those: a graded
    check keeps its state, score and feedback, and still counts; a rejected one still counts."""
    graded = taken(records, "alice", "attention_basics", NOW)
    rejected = taken(records, "bob", "attention_basics", NOW, state="rejected")
    waiting = records.reserve("carol", "attention_basics", SETTINGS, NOW + 1)
    assert isinstance(waiting, CheckRecord)
    assert records.interrupted(NOW + 10) == 1
    kept = records.get(graded.id)
    assert kept is not None and (kept.state, kept.score, kept.feedback) == (GRADED, 3.0, "PASS ...")
    assert records.get(rejected.id).state == "rejected"
    assert records.get(waiting.id).state == FAILED
    assert records.left("alice", "attention_basics", SETTINGS, NOW + 10) == 1
    assert records.left("bob", "attention_basics", SETTINGS, NOW + 10) == 1
    assert records.left("carol", "attention_basics", SETTINGS, NOW + 10) == 2


def race(make_records, settings, tries: int = 6) -> list[object]:
    """`tries` reservations of alice's at once, each through its own connection pool."""
    pools = [make_records() for _ in range(tries)]
    start = threading.Barrier(tries)
    found: list[object] = []

    def one(pool: CheckRecords) -> None:
        start.wait()
        try:
            found.append(pool.reserve("alice", "attention_basics", settings, NOW))
        except Exception as exc:  # noqa: BLE001 (a reservation that fails is what is looked for)
            found.append(exc)

    threads = [threading.Thread(target=one, args=(p,)) for p in pools]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in pools:
        p.close()
    assert all(isinstance(f, CheckRecord | Refusal) for f in found), found  # none failed
    return found


def test_requests_at_once_never_pass_the_limit_in_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}?timeout=60"
    found = race(lambda: CheckRecords(url), replace(SETTINGS, pending_per_student=10))
    assert sum(isinstance(f, CheckRecord) for f in found) == SETTINGS.per_day
    assert len(CheckRecords(url).list("alice")) == SETTINGS.per_day


def test_requests_at_once_never_pass_the_limit_in_postgresql(postgres):
    url = postgres.new_database("checks")
    found = race(lambda: CheckRecords(url), replace(SETTINGS, pending_per_student=10))
    assert sum(isinstance(f, CheckRecord) for f in found) == SETTINGS.per_day
    assert [r.student for r in CheckRecords(url).list()] == ["alice"] * SETTINGS.per_day


def test_records_list_who_when_what_score_and_outcome(records):
    a = taken(records, "alice", "attention_basics", NOW)
    b = taken(records, "bob", "masks_and_heads", NOW + 1, state=FAILED)
    assert [r.id for r in records.list()] == [a.id, b.id]
    assert [r.id for r in records.list(student="bob")] == [b.id]
    assert [r.id for r in records.list(assignment="attention_basics")] == [a.id]
    shown = records.list(student="alice")[0].for_instructor()
    assert shown["student"] == "alice" and shown["score"] == 3.0 and shown["state"] == GRADED
    assert shown["requested"].startswith("2027-01-15T08:00:00")
    answer = records.get(a.id).answer()
    assert "student" not in answer and "detail" not in answer  # no seed for the student


def test_the_queue_takes_students_in_turn():
    queue = FairQueue()
    for check in ("a1", "a2", "a3"):
        queue.put("alice", check)
    queue.put("bob", "b1")
    queue.put("carol", "c1")
    order = [queue.take(timeout=0)[1] for _ in range(5)]
    assert order == ["a1", "b1", "c1", "a2", "a3"]
    assert queue.take(timeout=0) is None


def test_the_queue_wakes_a_waiting_worker():
    queue = FairQueue()
    got = []
    worker = threading.Thread(target=lambda: got.append(queue.take(timeout=10)))
    worker.start()
    queue.put("alice", "a1")
    worker.join(timeout=10)
    assert got == [("alice", "a1")]


def test_the_due_date_policy():
    due = NOW
    on_time = due_decision(due, due - 1, "off")
    assert on_time.allowed and not on_time.late and on_time.message == ""
    assert due_decision(None, NOW, "off").allowed  # no due date: always open
    closed = due_decision(due, due + 1, "off")
    assert not closed.allowed and "Fri 15 Jan 2027, 08:00 UTC" in closed.message
    late = due_decision(due, due + 1, "late", "zero")
    assert late.allowed and late.late and "0 points" in late.message
    kept = due_decision(due, due + 1, "late", "none")
    assert kept.allowed and kept.late and "keeps its points" in kept.message


def test_the_due_date_is_read_from_the_gradebook_and_the_late_policy_from_the_config(tmp_path):
    from nbgrader.api import Gradebook

    from attention_course.classgrade.gradebook import find_alembic
    from attention_course.classgrade.nbgrader_api import copy_course, due_date, late_penalty
    from tests.course import COURSE_ROOT

    find_alembic()
    root = copy_course(tmp_path / "course", COURSE_ROOT)
    assert due_date("attention_basics", root) is None  # no gradebook yet
    assert not (root / "gradebook.db").exists()  # and looking made none
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(
            "attention_basics", duedate=datetime.datetime(2027, 1, 15, 8, 0)
        )
    assert due_date("attention_basics", root) == NOW
    assert due_date("masks_and_heads", root) is None
    assert late_penalty(root) == "none"
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text() + '\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    assert late_penalty(root) == "zero"


def test_settings_come_from_course_toml_then_the_options(tmp_path):
    toml = tmp_path / "course.toml"
    toml.write_text('[course]\nid = "x"\n[hub_check]\nper_day = 5\nafter_due = "late"\n')
    found = policy(tmp_path)
    assert (found.per_day, found.after_due, found.workers) == (5, "late", HUB_CHECK.workers)
    assert policy(tmp_path, per_day=1, after_due=None).per_day == 1
    for bad, said in (
        ("per_day = 0", "per_day"),
        ('after_due = "sometimes"', "after_due"),
        ("limit = 3", "limit: not a setting"),
        ('window = "day"', "window"),
    ):
        toml.write_text(f'[course]\nid = "x"\n[hub_check]\n{bad}\n')
        with pytest.raises(UserError, match=said):
            policy(tmp_path)
