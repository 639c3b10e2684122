"""A Dask task's work, done in this process (`grade_submission` called as a worker calls it): the
refusals a worker makes before it grades, and what it claims, grades, records and says.

The cluster tests (test_cluster_grading.py) run the same tasks on real workers into PostgreSQL;
these are the quick ones, into the course's SQLite gradebook, one submission graded.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import sys
import threading
import time

import pytest

from attention_course.classgrade.cluster import grade_submission, make_tasks
from attention_course.classgrade.jobs import STATE_DIR, ClassRun, State
from attention_course.classgrade.nbgrader_api import gradebook_scores
from attention_course.classgrade.run import autograde_class
from attention_course.cli.samples import sample_notebooks
from attention_course.settings import RETRIES
from tests.classgrade.test_class_grading import ASSIGNMENT, _write, fresh_course, write_sleepy
from tests.classgrade.test_cluster_grading import task_of
from tests.content.test_notebooks import cell_points

DASHBOARD = "127.0.0.1:0"  # Dask's HTTP server, on a free port (never a fixed one another uses)
OTHER_CODE = "has other graders or another version of attention-course than the run that sent"


@pytest.fixture(scope="module")
def course():
    """A course whose gradebook is set up (a first run, which refused `broken`), with `full`
    (the instructor's solutions) submitted and not graded yet."""
    root = fresh_course("attention-tasks-")
    _write(root, "broken", '{"cells": [ not json')
    assert autograde_class(ASSIGNMENT, root).ok
    _write(root, "full", sample_notebooks(ASSIGNMENT, root)["demo-instructor"])
    yield root
    shutil.rmtree(root.parent, ignore_errors=True)


def nothing_recorded(root, student: str) -> None:
    state = State(root, ASSIGNMENT)
    try:
        assert state.last(student) == {}
        assert state.lock(student)  # and no claim left behind
    finally:
        state.close()
    assert not (root / "autograded" / student).exists()
    assert student not in gradebook_scores(ASSIGNMENT, root)


def test_a_worker_refuses_a_task_sent_by_other_grading_code_then_grades_it_with_the_same(course):
    """The task carries the digest of the grading code the run saw; a worker whose graders
    differ (here: one changed after the task was sent) grades nothing, records nothing, and
    says so. With the graders as the run saw them, the same task is graded and recorded."""
    task = task_of(course, "full")
    grader = course / "grader_tests" / "test_softmax.py"
    original = grader.read_text()
    grader.write_text(original + "\n# changed on this worker only\n")
    try:
        said = grade_submission(task)
    finally:
        grader.write_text(original)
    assert said["status"] == "error" and OTHER_CODE in said["reason"], said
    assert said["worker"] == f"{socket.gethostname()}:{os.getpid()}"
    for other in ("0" * 64, "f" * 64):  # a digest before the worker's, and one after it
        said = grade_submission(dict(task, code=other))
        assert said["status"] == "error" and OTHER_CODE in said["reason"], said
    nothing_recorded(course, "full")

    said = grade_submission(task)
    full = sum(cell_points(ASSIGNMENT).values())
    assert (said["status"], said["total"]) == ("graded", full), said
    assert gradebook_scores(ASSIGNMENT, course)["full"]["total"] == full
    kept = State(course, ASSIGNMENT).last("full")
    assert (kept["fingerprint"], kept["status"]) == (task["fingerprint"], "graded")
    log = "".join(p.read_text() for p in (course / STATE_DIR / "workers").glob("*.log"))
    assert f"claimed {ASSIGNMENT}/full for {task['key']}" in log
    assert f"released {ASSIGNMENT}/full for {task['key']} held " in log
    assert log.rstrip().endswith(": graded")


def test_a_task_for_what_was_graded_since_it_was_sent_grades_nothing(course):
    task = task_of(course, "full")  # the run looked before the other run graded it
    said = grade_submission(task)
    assert said["status"] == "unchanged", said
    assert said["reason"] == ""  # as recorded: not waited for as if another run held it
    assert said["total"] == sum(cell_points(ASSIGNMENT).values())
    log = "".join(p.read_text() for p in (course / STATE_DIR / "workers").glob("*.log"))
    assert log.count("claimed ") == 1  # it never claimed it to grade


def test_a_worker_keeps_its_grading_job_for_the_next_task(course):
    """One grading job per worker thread stays for the next task (its start is paid once)."""
    from attention_course.classgrade import cluster

    jobs = []
    for student in ("kept1", "kept2"):
        _write(course, student, sample_notebooks(ASSIGNMENT, course)["demo-stub"])
        assert grade_submission(task_of(course, student))["status"] == "graded"
        jobs.append([job.proc.pid for _, job in cluster._idle if job.proc.poll() is None])
    assert len(jobs[0]) == 1 and jobs[1] == jobs[0]


class _IdleJob:
    """A grading job waiting for a task, as `_keep` sees one: it can be killed."""

    def __init__(self) -> None:
        self.killed = False

    def kill(self) -> None:
        self.killed = True


def test_off_a_worker_one_idle_job_is_kept_and_it_is_the_newest(monkeypatch):
    """Called outside a worker (room for one): a job of other grading code kept after one
    of a course graded before replaces it; the older is killed, the newer kept."""
    from attention_course.classgrade import cluster

    monkeypatch.setattr(cluster, "_idle", [])
    before, after = _IdleJob(), _IdleJob()
    cluster._keep(("course", "code of before"), before)
    assert cluster._idle == [(("course", "code of before"), before)] and not before.killed
    cluster._keep(("course", "code of after"), after)
    assert cluster._idle == [(("course", "code of after"), after)]
    assert before.killed and not after.killed


def test_a_local_cluster_asked_for_no_workers_has_one_of_one_thread():
    import logging

    from attention_course.classgrade.cluster import local_cluster

    made = local_cluster(0, silence_logs=logging.CRITICAL)
    try:
        assert [spec["options"]["nthreads"] for spec in made.worker_spec.values()] == [1]
        assert len(made.scheduler_info["workers"]) == 1
    finally:
        made.close()


def test_a_task_waits_its_patience_for_a_claim_let_go_then_grades(course):
    """Another run holds the submission for a moment (a stopped run's task winding down):
    the task waits for it, within its patience, then claims and grades it."""
    _write(course, "waited", sample_notebooks(ASSIGNMENT, course)["demo-stub"])
    other = State(course, ASSIGNMENT)
    assert other.lock("waited")
    letting_go = threading.Timer(0.5, other.unlock, ["waited"])
    letting_go.start()
    try:
        said = grade_submission(task_of(course, "waited", patience=30.0))
    finally:
        letting_go.join()
        other.close()
    assert said["status"] == "graded", said


def test_with_the_benchmarks_stages_on_a_job_grades_and_counts_the_gradebook(
    course, tmp_path, monkeypatch
):
    """ATTENTION_COURSE_STAGES (benchmarks/grading_speed.py): the job's Gradebook methods and
    database statements are counted as the stage "gradebook", and grading is as without."""
    from attention_course import trace
    from attention_course.classgrade import cluster
    from attention_course.classgrade.nbgrader_api import gradebook_settings

    stages = tmp_path / "stages.jsonl"
    monkeypatch.setenv(trace.STAGES_ENV, str(stages))
    _write(course, "staged", sample_notebooks(ASSIGNMENT, course)["demo-stub"])
    job = cluster._start_job(course, False, gradebook_settings(course)[0])
    try:
        reply, _ = cluster._ask(job, task_of(course, "staged"), 120.0, lambda: True)
    finally:
        job.kill()
    assert (reply["graded"], reply["total"]) == (True, 0.0), reply
    (line,) = [json.loads(text) for text in stages.read_text().splitlines()]
    assert line["student"] == "staged" and line["stages"]["gradebook"][0] > 0, line


def test_a_notebook_that_is_not_json_is_the_students_on_a_worker_as_in_a_local_run(course):
    """nbgrader says so in its log (its error is a traceback of its own): the job reads both,
    and the submission is the student's, "not graded" with the reason, not a fault of grading."""
    _write(course, "garbled", '{"cells": [ not json')
    said = grade_submission(task_of(course, "garbled"))
    assert (said["status"], said["reason"]) == ("not graded", "the notebook is not valid JSON")


def test_a_worker_without_the_course_folder_refuses(course, tmp_path):
    task = dict(task_of(course, "full"), course=str(tmp_path / "elsewhere"))
    said = grade_submission(task)
    assert said["status"] == "error", said
    assert f"the course folder {tmp_path / 'elsewhere'} is not on worker" in said["reason"]


def test_every_task_of_a_run_has_a_key_of_its_own(course):
    run = ClassRun(ASSIGNMENT, {})
    first, second = (
        make_tasks(course, run, True, False, 60.0),
        make_tasks(course, run, True, False, 60.0),
    )
    keys = {first("a", "x")["key"], first("b", "x")["key"], second("a", "x")["key"]}
    assert len(keys) == 3
    assert all(k.startswith(f"grade-{ASSIGNMENT}-") for k in keys)
    task = first("a", "print")
    assert (task["student"], task["fingerprint"], task["seconds"]) == ("a", "print", 60.0)
    assert task["course"] == str(course) and task["feedback"] is True


def test_a_fault_of_grading_is_told_and_never_recorded(tmp_path):
    """`finished` with a job's reply of a fault of grading: an error this run, nothing kept,
    so the next run grades it again; a student's failure is kept. (The replies are read from
    JSON, as a job's are: their strings are not the module's own.)"""
    from attention_course.classgrade.jobs import finished

    state = State(tmp_path, ASSIGNMENT)
    told: list[tuple[str, str]] = []
    run = ClassRun(ASSIGNMENT, {})
    fault, refused = json.loads(
        '[{"student": "s1", "graded": false, "fault": true, "side": "grading", "reason": "boom",'
        ' "seconds": 0.0}, {"student": "s2", "graded": false, "fault": false, "side": "student",'
        ' "reason": "no", "seconds": 2.5}]'
    )
    try:
        for reply in (fault, refused):
            assert state.lock(reply["student"])
            finished(
                run, reply, state, {"s1": "a" * 64, "s2": "b" * 64}, lambda *a: told.append(a[:2])
            )
        assert (run.outcomes["s1"].status, run.outcomes["s1"].reason) == ("error", "boom")
        assert state.last("s1") == {}
        assert (state.last("s2")["status"], state.last("s2")["seconds"]) == ("not graded", 2.5)
        assert told == [("done", "s1"), ("done", "s2")]
        assert state.lock("s1") and state.lock("s2")  # both let go
        assert not run.ok  # a fault of grading: the run says so (exit 1)
        assert ClassRun(ASSIGNMENT, {"s2": run.outcomes["s2"]}).ok
    finally:
        state.close()


def test_a_grade_whose_record_the_gradebook_refused_is_a_fault_of_grading(tmp_path):
    """The gradebook does not answer when the outcome is kept (no retries left): the run says
    so, keeps nothing in .grading/ either, and the next run grades it again."""
    from attention_course.classgrade.gradebook import Records
    from attention_course.classgrade.jobs import finished
    from attention_course.settings import Retries

    unreachable = Records("postgresql+psycopg://nobody@127.0.0.1:1/db", "course", ASSIGNMENT)
    state = State(tmp_path, ASSIGNMENT, records=unreachable, retries=Retries(attempts=0))
    run = ClassRun(ASSIGNMENT, {})
    try:
        assert state.lock("s1")
        reply = {"student": "s1", "graded": True, "total": 3.0, "seconds": 1.0}
        finished(run, reply, state, {"s1": "a" * 64}, lambda *a: None)
        outcome = run.outcomes["s1"]
        assert outcome.status == "error"
        assert outcome.reason.startswith("graded, but its outcome was not recorded: ")
        assert state.last("s1") == {}
    finally:
        state.close()


def test_a_gradebook_that_is_no_database_is_not_tried_again_nor_said_as_a_student_outcome(
    tmp_path,
):
    """Keeping the outcome fails for good (the gradebook's file is not a database): not a
    transient fault to wait out, nor an outcome of the run, but the error itself; nothing is
    kept in .grading/ either."""
    import sqlalchemy

    from attention_course.classgrade.gradebook import Records
    from attention_course.classgrade.jobs import finished

    broken = tmp_path / "gradebook.db"
    broken.write_bytes(b"not a database, though long enough to be read as one" * 100)
    records = Records(f"sqlite:///{broken}", "course", ASSIGNMENT)
    state = State(tmp_path, ASSIGNMENT, records=records)
    run = ClassRun(ASSIGNMENT, {})
    try:
        assert state.lock("s1")
        reply = {"student": "s1", "graded": True, "total": 3.0, "seconds": 1.0}
        start = time.monotonic()
        with pytest.raises(sqlalchemy.exc.DatabaseError, match="file is not a database"):
            finished(run, reply, state, {"s1": "a" * 64}, lambda *a: None)
        assert time.monotonic() - start < RETRIES.delay(1)  # not waited for as a retry
        assert "s1" not in run.outcomes and state.last("s1") == {}
    finally:
        state.close()


def test_a_claim_the_gradebook_cannot_answer_is_a_fault_of_this_run(tmp_path):
    """Whether this very version was graded elsewhere is asked of the gradebook; when it does
    not answer, the submission is an error of this run (graded by the next), and let go."""
    from attention_course.classgrade.gradebook import Records
    from attention_course.classgrade.jobs import claim
    from attention_course.settings import Retries

    unreachable = Records("postgresql+psycopg://nobody@127.0.0.1:1/db", "course", ASSIGNMENT)
    state = State(tmp_path, ASSIGNMENT, records=unreachable, retries=Retries(attempts=0))
    run = ClassRun(ASSIGNMENT, {})
    told: list[str] = []
    try:
        assert not claim(run, state, "s1", "a" * 64, lambda kind, student, o: told.append(o.status))
        outcome = run.outcomes["s1"]
        assert outcome.status == "error" and told == ["error"]
        assert outcome.reason.startswith("not graded in this run: ")
        assert state.lock("s1")  # let go
        assert state.last("s1") == {}
    finally:
        state.close()


def _transient_once(monkeypatch, then=None):
    """The task's grading meets a fault of the gradebook (a job's reply of the infrastructure's
    side) the first time; then `then(task, wanted)` (by default, grading as it is). The times
    of the tries (time.monotonic)."""
    from attention_course.classgrade import cluster

    real, tries = cluster._graded, []

    def graded(task, wanted):
        tries.append(time.monotonic())
        if len(tries) == 1:
            return {"student": task["student"], "graded": False, "fault": True,
                    "side": "transient", "reason": "the gradebook's database failed: gone",
                    "seconds": 0.0}  # fmt: skip
        return (then or real)(task, wanted)

    monkeypatch.setattr(cluster, "_graded", graded)
    return tries


def test_a_transient_fault_is_graded_again_after_its_back_off_still_claimed(course, monkeypatch):
    """Graded again on the same worker after the first retry's wait (settings.RETRIES), not
    before, then recorded as any grade is; claimed all along (one claim in the worker's log)."""
    _write(course, "again", sample_notebooks(ASSIGNMENT, course)["demo-instructor"])
    tries = _transient_once(monkeypatch)
    said = grade_submission(task_of(course, "again"))
    full = sum(cell_points(ASSIGNMENT).values())
    assert (said["status"], said["total"]) == ("graded", full), said
    assert len(tries) == 2 and tries[1] - tries[0] >= RETRIES.delay(1)
    assert gradebook_scores(ASSIGNMENT, course)["again"]["total"] == full
    log = "".join(p.read_text() for p in (course / STATE_DIR / "workers").glob("*.log"))
    assert log.count(f"claimed {ASSIGNMENT}/again for ") == 1


def test_a_task_no_longer_wanted_while_it_waits_to_retry_stops_and_records_nothing(
    course, monkeypatch
):
    from attention_course.classgrade import cluster

    _write(course, "dropped", sample_notebooks(ASSIGNMENT, course)["demo-stub"])
    tries = _transient_once(monkeypatch, then=lambda task, wanted: pytest.fail("graded again"))
    monkeypatch.setattr(cluster, "_still_wanted", lambda: lambda: not tries)
    said = grade_submission(task_of(course, "dropped"))
    assert said["status"] == "error", said
    assert said["reason"] == "stopped: the run that sent it is gone"
    assert len(tries) == 1
    nothing_recorded(course, "dropped")


def test_a_transient_fault_past_its_last_retry_is_a_fault_of_grading_recorded_nowhere(
    course, monkeypatch
):
    """Every try meets the gradebook's fault: after the last retry (two, here) the task says
    it is a fault of grading, with the fault's own words, and records nothing."""
    from attention_course.classgrade import cluster
    from attention_course.classgrade.jobs import Retrying
    from attention_course.settings import Retries

    _write(course, "flaky", sample_notebooks(ASSIGNMENT, course)["demo-stub"])
    tries = []

    def graded(task, wanted):  # every try meets the fault
        tries.append(task["student"])
        return {"student": task["student"], "graded": False, "fault": True,
                "side": "transient", "reason": "the gradebook's database failed: gone",
                "seconds": 0.0}  # fmt: skip

    monkeypatch.setattr(cluster, "_graded", graded)
    quick = Retries(attempts=2, first=0.05, longest=0.05)
    monkeypatch.setattr(cluster, "Retrying", lambda: Retrying(quick))
    said = grade_submission(task_of(course, "flaky"))
    assert (said["status"], said["reason"]) == ("error", "the gradebook's database failed: gone")
    assert len(tries) == 3  # the first try and two retries
    nothing_recorded(course, "flaky")


def test_a_job_past_the_tasks_time_is_the_students_and_a_job_that_died_is_a_fault(course):
    """A task's grading job that has not answered by the submission's time is killed: the
    submission is not graded, which is recorded (its grading took too long); one whose job
    died is a fault of grading (graded again by the next run). Neither job is kept. (The
    run gives a job PACING.wait_untold past the time for a wait it was not told of yet: the
    submission's first cell works 30 s, far past both.)"""
    import nbformat

    from attention_course.classgrade import cluster
    from attention_course.classgrade.nbgrader_api import gradebook_settings

    slow = sample_notebooks(ASSIGNMENT, course)["demo-instructor"]
    slow.cells.insert(0, nbformat.v4.new_code_cell("import time\ntime.sleep(30)"))
    _write(course, "slow", slow)
    task, db = task_of(course, "slow"), gradebook_settings(course)[0]
    job = cluster._start_job(course, False, db)
    reply, kept = cluster._ask(job, task, 0.2, lambda: True)
    assert (reply["graded"], reply["side"], kept) == (False, "student", False), reply
    assert reply["reason"] == "grading took longer than 0.2 s"
    assert job.proc.wait(timeout=10) == -9

    job = cluster._start_job(course, False, db)

    def wanted() -> bool:  # still wanted, but its job dies meanwhile
        job.proc.kill()
        return True

    reply, kept = cluster._ask(job, task, 60.0, wanted)
    assert (reply["graded"], reply["side"], kept) == (False, "grading", False), reply
    assert reply["reason"] == "its grading process ended unexpectedly"


def test_a_task_whose_job_is_stopped_past_its_seconds_records_the_students_time_used_up(
    course, monkeypatch
):
    """A grading job that answers nothing at all (stopped: SIGSTOP) is killed once the
    submission's seconds have passed, and the submission is recorded as not graded for its
    time; the task does not wait on for the job (it would until the run stopped wanting it)."""
    import signal

    from attention_course.classgrade import cluster

    _write(course, "stopped", sample_notebooks(ASSIGNMENT, course)["demo-instructor"])
    start_job, started = cluster._start_job, []

    def stopped_job(*args):
        job = start_job(*args)
        os.killpg(job.proc.pid, signal.SIGSTOP)
        started.append(job)
        return job

    monkeypatch.setattr(cluster, "_idle", [])  # no job of an earlier task to take
    monkeypatch.setattr(cluster, "_start_job", stopped_job)
    began = time.monotonic()
    # wanted for 30 s only: a task that waited on for its job would end then, as stopped
    monkeypatch.setattr(cluster, "_still_wanted", lambda: lambda: time.monotonic() < began + 30)
    said = grade_submission(task_of(course, "stopped", seconds=1.0))
    assert (said["status"], said["reason"]) == ("not graded", "grading took longer than 1 s")
    assert time.monotonic() - began < 20
    assert len(started) == 1 and started[0].proc.wait(timeout=10) == -9
    kept = State(course, ASSIGNMENT).last("stopped")
    assert (kept["status"], kept["reason"]) == ("not graded", "grading took longer than 1 s")
    assert cluster._idle == []  # a killed job is not kept


def _wanted_for(calls: int):
    """A task's `wanted` (as `_still_wanted` gives it) true for its first `calls` looks only:
    the run that sent the task went away then."""
    looks = itertools.count(1)
    return lambda: lambda: next(looks) <= calls


@pytest.mark.parametrize("looks", [1, 0])
def test_a_task_no_longer_wanted_stops_says_so_and_records_nothing(course, monkeypatch, looks):
    """The run that sent a task goes away while the task's job grades (after one look) or
    before it has asked its job anything (no look): the task says it stopped, records
    nothing and lets the submission go; a job that was grading is killed, an idle one kept."""
    from attention_course.classgrade import cluster

    write_sleepy(course)
    start_job, started = cluster._start_job, []

    def start(*args):
        started.append(start_job(*args))
        return started[-1]

    monkeypatch.setattr(cluster, "_idle", [])
    monkeypatch.setattr(cluster, "_start_job", start)
    monkeypatch.setattr(cluster, "_still_wanted", _wanted_for(looks))
    said = grade_submission(task_of(course, "sleepy"))
    assert (said["status"], said["reason"]) == ("error", "stopped: the run that sent it is gone")
    [job] = started
    if looks:  # it was grading: killed, not kept
        assert job.proc.wait(timeout=10) == -9 and cluster._idle == []
    else:  # it never had the task: kept for the next one
        assert job.proc.poll() is None and [j for _, j in cluster._idle] == [job]
        job.kill()
    state = State(course, ASSIGNMENT)
    try:
        assert state.last("sleepy") == {} and state.lock("sleepy")  # nothing kept, let go
    finally:
        state.close()


def test_a_grading_job_dies_with_the_process_that_started_it(course):
    """A process starts a grading job, which is then busy (stopped: it reads no request, so it
    would not see its requests' pipe close), and is killed (SIGKILL: it cleans nothing up):
    the job does not live on without it (the kernel kills it, as the job asked as it started)."""
    import signal
    import subprocess

    code = (
        "import os, signal, sys, time\n"
        "from pathlib import Path\n"
        "from attention_course.classgrade.jobs import GradingJob\n"
        "job = GradingJob.start(Path(sys.argv[1]), False, sys.stderr)\n"
        "print(job.proc.pid, flush=True)\n"
        "while not (got := job.read()):\n"  # its first line: ready (it asked to die with us)
        "    if got is None:\n"
        "        sys.exit('the grading job ended')\n"
        "os.kill(job.proc.pid, signal.SIGSTOP)\n"  # busy: reads no request, sees no EOF
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    starter = subprocess.Popen(
        [sys.executable, "-c", code, str(course)], stdout=subprocess.PIPE, text=True
    )
    assert starter.stdout is not None
    job = int(starter.stdout.readline())
    try:
        assert starter.stdout.readline() == "ready\n"
        starter.kill()
        starter.wait()
        until = time.monotonic() + 20
        while time.monotonic() < until and _running(job):
            time.sleep(0.05)
        assert not _running(job), "the grading job outlived the process that started it"
    finally:
        if _running(job):
            os.kill(job, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether process `pid` is there and not a zombie (a zombie runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_a_job_that_cannot_start_is_a_fault_of_grading_and_nothing_is_recorded(course, monkeypatch):
    from attention_course.classgrade import cluster

    _write(course, "nojob", sample_notebooks(ASSIGNMENT, course)["demo-instructor"])
    task = task_of(course, "nojob")
    monkeypatch.setattr(cluster, "_idle", [])  # no job of an earlier task to take
    monkeypatch.setattr(sys, "executable", "/bin/false")  # the job's interpreter ends at once
    said = grade_submission(task)
    assert said["status"] == "error", said
    assert said["reason"].startswith(f"a grading job did not start on {socket.gethostname()}:")
    assert said["seconds"] == 0.0  # no time is counted where nothing was graded
    nothing_recorded(course, "nojob")


def test_a_submission_a_grading_job_refuses_is_the_students_to_record(course):
    """What a grading job answers (job.py `grade`, in this process) for a submission that
    holds a link by the time it is graded: not graded, the student's (recorded), and why."""
    from attention_course.classgrade import job
    from attention_course.classgrade.nbgrader_api import api

    path = _write(course, "linked", sample_notebooks(ASSIGNMENT, course)["demo-stub"])
    os.symlink("/etc/passwd", path.parent / "data.txt")
    task = {"assignment": ASSIGNMENT, "student": "linked", "feedback": True}
    reply = job.grade(task, course, api(course, False, in_process=True), False)
    assert (reply["graded"], reply["fault"], reply["side"]) == (False, False, "student"), reply
    assert reply["reason"] == "the submission holds a symbolic link (data.txt): refused"
    assert "total" not in reply and reply["seconds"] >= 0.0


def test_feedback_that_cannot_be_written_leaves_the_grade_and_says_why(course):
    """The grade is stored; its feedback fails (a file where its folder goes): graded, with
    the reason, and no fault of grading (the grade is not thrown away)."""
    from attention_course.classgrade import job
    from attention_course.classgrade.nbgrader_api import api

    _write(course, "nofeedback", sample_notebooks(ASSIGNMENT, course)["demo-stub"])
    (course / "feedback").mkdir(exist_ok=True)
    (course / "feedback" / "nofeedback").write_text("in the way")
    task = {"assignment": ASSIGNMENT, "student": "nofeedback", "feedback": True}
    reply = job.grade(task, course, api(course, False, in_process=True), False)
    assert (reply["graded"], reply["total"], "fault" in reply) == (True, 0.0, False), reply
    assert reply["feedback_error"].startswith("[ERROR] There was an error processing assignment")


def test_a_class_sent_to_dask_gets_one_outcome_each_and_a_second_run_grades_nothing():
    """The client's side (`grade_on_cluster`), on Dask in this process (a scheduler and one
    worker thread): every submission to grade is sent as a task and its outcome told once;
    one that is not a notebook is refused before anything is sent; the next run finds them
    all unchanged."""
    from distributed import Client, LocalCluster

    root = fresh_course("attention-dask-here-")
    told: list[tuple] = []
    try:
        samples = sample_notebooks(ASSIGNMENT, root)
        _write(root, "s1", samples["demo-stub"])
        _write(root, "s2", samples["demo-stub"])
        _write(root, "s3", '{"cells": [ not json')
        with (
            LocalCluster(
                processes=False, n_workers=1, threads_per_worker=1, dashboard_address=DASHBOARD
            ) as cluster,
            Client(cluster) as client,
        ):
            run = autograde_class(
                ASSIGNMENT, root, scheduler=client, progress=lambda *said: told.append(said)
            )
            again = autograde_class(ASSIGNMENT, root, scheduler=client)
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)
    assert run.ok and sorted(run.outcomes) == ["s1", "s2", "s3"]
    assert [(run.outcomes[s].status, run.outcomes[s].total) for s in ("s1", "s2")] == [
        ("graded", 0.0),
        ("graded", 0.0),
    ]
    assert run.outcomes["s3"].status == "not graded"
    assert told[0] == ("start", 3, None)
    assert sorted((kind, s, o.status) for kind, s, o in told[1:]) == [
        ("done", "s1", "graded"),
        ("done", "s2", "graded"),
        ("done", "s3", "not graded"),
    ]
    assert {s: o.status for s, o in again.outcomes.items()} == {
        "s1": "unchanged",
        "s2": "unchanged",
        "s3": "unchanged",
    }


def test_a_task_whose_connection_broke_stops_the_run_naming_the_scheduler(monkeypatch):
    """A task that ends with a broken connection (its worker lost the scheduler) stops the
    run in one line that names the scheduler it was sent to, never a made-up address."""
    from distributed import Client, LocalCluster

    from attention_course.classgrade import cluster

    def cut_off(task: dict) -> dict:
        raise ConnectionResetError("the connection to the scheduler broke")

    root = fresh_course("attention-dask-cut-")
    try:
        _write(root, "s1", sample_notebooks(ASSIGNMENT, root)["demo-stub"])
        with (
            LocalCluster(
                processes=False, n_workers=1, threads_per_worker=1, dashboard_address=DASHBOARD
            ) as dask_cluster,
            Client(dask_cluster) as client,
        ):
            monkeypatch.setattr(cluster, "grade_submission", cut_off)
            with pytest.raises(cluster.SchedulerLost) as lost:
                autograde_class(ASSIGNMENT, root, scheduler=client)
            address = dask_cluster.scheduler_address
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)
    assert str(lost.value).startswith(f"lost the Dask scheduler at {address}: ")
    assert "\n" not in str(lost.value)
