"""The grading service without a hub: what it refuses before any grading and why (size, JSON,
assignment), the due-date policy applied, its queue taking students in turn, and a hostile
notebook graded by its own workers in the sandbox. Real SQLite gradebook; the workers are
started by the one test that grades."""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from attention_course.cli.samples import sample_notebooks
from attention_course.course import Course
from attention_course.integrations.check_grading import GRADING, STUDENTS
from attention_course.integrations.check_intake import Intake
from attention_course.integrations.check_limits import (
    FAILED,
    GRADED,
    PENDING,
    QUEUED,
    REJECTED,
    CheckRecords,
)
from attention_course.integrations.hub_check import CheckService
from attention_course.settings import HUB_CHECK
from tests.course import COURSE_ROOT

ASSIGNMENT = "attention_basics"
RELEASED = (COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()


@pytest.fixture
def service(tmp_path):
    def make(due=None, **settings):
        records = CheckRecords(f"sqlite:///{tmp_path / 'gradebook.db'}")
        made = CheckService(
            Course.load(COURSE_ROOT),
            records,
            replace(HUB_CHECK, **settings),
            lambda assignment, student: due,
            "zero",
            clock=lambda: 2_000_000_000.0,
        )
        made_services.append(made)
        return made

    made_services: list[CheckService] = []
    yield make
    for made in made_services:
        made.stop()


def test_what_is_refused_before_grading(service):
    checks = service()
    status, answer = checks.submit("alice", b'{"cells": [ not JSON', None)
    assert status == 400 and str(checks.folder) not in answer["error"]
    status, answer = checks.submit("alice", RELEASED, "no_such_assignment")
    assert status == 400 and "unknown assignment" in answer["error"]
    quiz = COURSE_ROOT / "release" / "attention_quiz" / "attention_quiz.ipynb"
    status, answer = checks.submit("alice", quiz.read_bytes(), None)
    assert status == 400 and "not checked here" in answer["error"]
    assert checks.records.list() == [] and len(checks.queue) == 0  # none counted, none queued
    assert list(checks.folder.iterdir()) == []  # nothing kept of them


def test_a_body_over_the_limit_is_refused_unread_and_counted(service):
    checks = service()
    body = b"x" * (checks.settings.notebook_bytes + 1)
    status, answer = checks.submit("alice", body, ASSIGNMENT)
    assert status == 413 and "larger than 4 MiB" in answer["error"], answer
    assert "counts as a check of attention_basics" in answer["error"]
    (record,) = checks.records.list()
    assert (record.student, record.assignment, record.state) == ("alice", ASSIGNMENT, REJECTED)
    assert checks.records.left("alice", ASSIGNMENT, checks.settings, checks.clock()) == 2
    assert list(checks.folder.iterdir()) == []


def _parse_bomb(elements: int = 700_000) -> bytes:
    """One code cell `x=[a,a,...]` (1.4 MB): parsing it to guess the assignment by the functions
    it defines takes most of a gigabyte."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x=[" + "a," * elements + "]"))
    return nbformat.writes(nb).encode()


def _rss(pid: int) -> int:
    """A process's resident size in bytes (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"VmRSS:\s+(\d+)", status)
    return int(found.group(1)) * 1024 if found else 0


def test_a_service_grown_past_the_mark_still_reads_an_honest_notebook():
    """The mark is what a reading itself takes: a service that has grown past it (its workers
    start as its children, and the kernel's ru_maxrss of a child counts what its parent had at
    the fork) still reads an ordinary notebook, and refuses no one for it."""
    grown = bytearray(HUB_CHECK.intake_memory // 2 + 64 * 2**20)
    grown[::4096] = b"\x01" * len(grown[::4096])  # resident, past the mark
    intake = Intake(COURSE_ROOT, HUB_CHECK)
    try:
        read = intake.read(COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", None)
    finally:
        intake.close()
        del grown
    assert read.assignment == ASSIGNMENT and not read.abusive, read


def test_a_parse_bomb_costs_its_student_checks_and_delays_nobody(service):
    """mallory posts a parse bomb naming no assignment; while a worker of the intake reads it
    (and grows), bob's notebook is read and his check taken; mallory's is refused as over the
    intake's memory and counted as a check of each assignment; her next bomb is not even
    read. The service (this process) never parsed it: its memory did not grow."""
    checks = service(per_day=1, intake_seconds=120.0)  # its memory decides, however busy
    before = _rss(os.getpid())
    answers: dict[str, tuple[int, dict]] = {}
    mallory = threading.Thread(
        target=lambda: answers.update(mallory=checks.submit("mallory", _parse_bomb(), None))
    )
    mallory.start()
    deadline = time.monotonic() + 60
    while not any(_rss(pid) > 64 * 2**20 for pid in list(checks.intake.reading)):
        assert mallory.is_alive() and time.monotonic() < deadline, answers
        time.sleep(0.02)
    status, bob = checks.submit("bob", RELEASED, None)  # read by the other worker meanwhile
    assert mallory.is_alive(), "bob's notebook waited for mallory's"
    assert status == 202, bob
    mallory.join(60)
    status, refused = answers["mallory"]
    assert status == 400 and "of memory to read: refused" in refused["error"], refused
    assert "counts as a check of attention_basics, masks_and_heads" in refused["error"]
    states = {(r.student, r.assignment, r.state) for r in checks.records.list()}
    assert states == {
        ("bob", ASSIGNMENT, QUEUED),
        ("mallory", ASSIGNMENT, REJECTED),
        ("mallory", "masks_and_heads", REJECTED),
    }
    status, again = checks.submit("mallory", _parse_bomb(), None)
    assert status == 429 and "you have used the 1 check" in again["error"], again
    assert _rss(os.getpid()) - before < 64 * 2**20


def test_the_assignment_is_found_from_the_notebook(service):
    checks = service()
    status, answer = checks.submit("alice", RELEASED, None)
    assert status == 202, answer
    assert answer["check"]["assignment"] == "attention_basics"
    assert answer["checks_left"] == HUB_CHECK.per_day - 1


def test_after_the_due_date_off_refuses_and_late_marks_the_check(service):
    status, answer = service(due=1_000_000_000.0, after_due="off").submit("alice", RELEASED, None)
    assert status == 403 and "has passed" in answer["error"]
    late = service(due=1_000_000_000.0, after_due="late")
    status, answer = late.submit("alice", RELEASED, None)
    assert status == 202 and answer["check"]["late"] is True
    assert "late work gets 0 points" in answer["note"]
    (record,) = late.records.list()
    assert record.late and late.pending[record.id].late_note == answer["note"]


def test_each_student_is_checked_against_their_own_due_date(service):
    """An extension moves one student's due date (the service asks for it by student)."""
    checks = service(after_due="off")
    asked = []

    def due(assignment, student):
        asked.append((assignment, student))
        return 4_000_000_000.0 if student == "alice" else 1_000_000_000.0

    checks.due = due
    assert checks.submit("alice", RELEASED, None)[0] == 202
    status, answer = checks.submit("bob", RELEASED, None)
    assert status == 403 and "has passed" in answer["error"]
    assert asked == [("attention_basics", "alice"), ("attention_basics", "bob")]


def test_the_service_queues_students_in_turn(service):
    checks = service(pending_per_student=2)
    nb = nbformat.reads(RELEASED.decode(), 4)
    asked = []
    for student in ("alice", "alice", "bob"):
        nb.metadata["asked"] = len(asked)  # another notebook each time
        status, answer = checks.submit(student, nbformat.writes(nb).encode(), None)
        assert status == 202, answer
        asked.append((student, answer["check"]["id"]))
    status, _ = checks.submit("alice", RELEASED, None)
    assert status == 429  # two of alice's are waiting
    order = [checks.queue.take(timeout=0) for _ in asked]
    assert order == [asked[0], asked[2], asked[1]]


def test_a_check_is_read_by_its_student_and_the_instructors_only(service):
    checks = service()
    checks.instructors = frozenset({"teacher"})
    status, answer = checks.submit("alice", RELEASED, None)
    check_id = answer["check"]["id"]
    alice, bob = {"name": "alice", "groups": []}, {"name": "bob", "groups": []}
    assert checks.read(alice, check_id)[0] == 200
    assert "student" not in checks.read(alice, check_id)[1]["check"]
    assert checks.read(bob, check_id) == (404, {"error": f"no check {check_id} of yours"})
    assert checks.listing(bob, False, None, None) == (200, {"checks": []})
    assert checks.listing(bob, True, None, None)[0] == 403
    assert checks.listing(bob, False, None, "alice")[0] == 403
    for student in ({"name": "carol", "groups": ["students"]}, {"name": "dan", "groups": None}):
        # a hub group is not the instructors' group: its members read only their own
        assert checks.read(student, check_id) == (404, {"error": f"no check {check_id} of yours"})
        assert checks.listing(student, True, None, None)[0] == 403
    for instructor in (
        {"name": "teacher", "groups": []},
        {"name": "ta", "groups": ["instructors"]},
    ):
        status, answer = checks.read(instructor, check_id)
        assert status == 200 and answer["check"]["student"] == "alice"
        status, listed = checks.listing(instructor, True, None, None)
        assert [c["id"] for c in listed["checks"]] == [check_id]


def test_a_gradebook_that_does_not_answer_is_one_line_and_counts_nothing(service):
    from attention_course.errors import GradebookUnavailable
    from attention_course.integrations.hub_check import UNAVAILABLE, guarded

    def gone(assignment, student):
        raise GradebookUnavailable("gradebook postgresql://127.0.0.1:1/x: connection refused")

    checks = service()
    checks.due = gone
    assert guarded(lambda: checks.submit("alice", RELEASED, None)) == (503, {"error": UNAVAILABLE})
    assert checks.records.list() == [] and len(checks.queue) == 0


def _hostile_notebook() -> bytes:
    """The instructor's attention_basics with a giant output in softmax's cell, a create_qkv
    that ends its process (os._exit) and a causal_mask that never returns."""
    nb = sample_notebooks(ASSIGNMENT, COURSE_ROOT)["demo-instructor"]
    for cell in nb.cells:
        if cell.get("id") == "softmax":
            cell.source = 'print("x" * 20_000_000)\n' + cell.source
        elif cell.get("id") == "create_qkv":
            cell.source = "import os\n\ndef create_qkv(X, W_q, W_k, W_v):\n    os._exit(3)\n"
        elif cell.get("id") == "causal_mask":
            cell.source = "def causal_mask(seq_len):\n    while True:\n        pass\n"
    return nbformat.writes(nb).encode()


def test_a_hostile_notebook_costs_its_student_one_check_and_nobody_else_anything(service):
    """Sent through the service and graded by its own workers, in the sandbox: the student
    reads why each function lost its points, the check counts once, and the service goes on
    to grade the next student's notebook, who gets full marks."""
    checks = service(per_day=2, pending_per_student=1)
    checks.start()
    status, hostile = checks.submit("mallory", _hostile_notebook(), None)
    assert status == 202, hostile
    honest = nbformat.writes(sample_notebooks(ASSIGNMENT, COURSE_ROOT)["demo-instructor"])
    status, other = checks.submit("bob", honest.encode(), None)
    assert status == 202, other
    deadline = time.monotonic() + 240
    ids = (hostile["check"]["id"], other["check"]["id"])
    while any(checks.records.get(i).state in PENDING for i in ids):
        assert time.monotonic() < deadline, [checks.records.get(i) for i in ids]
        time.sleep(0.5)
    mallory, bob = (checks.records.get(i) for i in ids)
    assert (mallory.state, mallory.score, mallory.max_score) == (GRADED, 25.0, 35.0), mallory
    assert "causal_mask ran longer than the time limit (an endless loop?)" in mallory.feedback
    assert "create_qkv ended with exit code 3 (os._exit or a crash?)" in mallory.feedback
    assert "softmax: 10 / 10 points" in mallory.feedback  # its output hurts nobody
    assert checks.records.left("mallory", ASSIGNMENT, checks.settings, checks.clock()) == 1
    assert (bob.state, bob.score, bob.max_score) == (GRADED, 35.0, 35.0), bob
    assert list(checks.folder.iterdir()) == []  # the notebooks are not kept


@pytest.mark.parametrize(
    "fault, state, left", [(GRADING, FAILED, 2), (STUDENTS, REJECTED, 1), (None, GRADED, 1)]
)
def test_a_check_is_charged_to_its_student_only_when_the_fault_is_theirs(
    service, fault, state, left
):
    """What grading says of a check decides who pays: the graders' or the machine's fault
    (GRADING) fails it and gives it back; the student's notebook (STUDENTS) rejects it and it
    counts; graded, it counts. (The grading itself is the pool's, tested beside.)"""
    from attention_course.integrations.check_grading import Graded

    checks = service(per_day=2)
    said = {GRADING: "not checked: the graders could not run", STUDENTS: "not checked: bad"}

    def grade(course_root, assignment, notebook, late_note):
        score = None if fault else 1.0
        return Graded(score, None if fault else 35.0, said.get(fault, "PASS"), "x", fault)

    checks.pool.grade = grade
    checks.start()
    status, answer = checks.submit("alice", RELEASED, None)
    assert status == 202, answer
    check_id = answer["check"]["id"]
    deadline = time.monotonic() + 60
    while checks.records.get(check_id).state in PENDING:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert checks.records.get(check_id).state == state
    assert checks.records.left("alice", ASSIGNMENT, checks.settings, checks.clock()) == left


def test_a_grading_worker_that_dies_fails_its_check_and_the_pool_is_made_again(tmp_path):
    """A worker killed between checks: the next check fails as grading's fault (not the
    student's), and the one after it is graded by a new worker (here: refused as the
    student's, a notebook that is not there, answered without the sandbox)."""
    import signal

    from attention_course.integrations.check_grading import GradingPool

    pool = GradingPool(1)
    missing = tmp_path / "attention_basics.ipynb"
    try:
        first = pool.grade(COURSE_ROOT, ASSIGNMENT, missing, "")
        assert first.fault == STUDENTS, first
        for pid in list(pool._pool._processes):  # the worker, killed as the OOM killer would
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        broken = pool.grade(COURSE_ROOT, ASSIGNMENT, missing, "")
        while broken.fault == STUDENTS and time.monotonic() < deadline:  # not seen dead yet
            time.sleep(0.1)
            broken = pool.grade(COURSE_ROOT, ASSIGNMENT, missing, "")
        assert broken.fault == GRADING and "died" in broken.detail, broken
        again = pool.grade(COURSE_ROOT, ASSIGNMENT, missing, "")
        assert again.fault == STUDENTS, again
    finally:
        pool.close()
