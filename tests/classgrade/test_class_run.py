"""A class run on a small class, graded in this process: what it grades, records and regrades.

The class-grading tests grade a larger class through the command; these grade two notebooks of
one assignment and a graded quiz, a few seconds a run, so that each rule of an incremental run
(what is new or changed is graded, nothing else; a changed reference or engine regrades the
assignments whose grades it decides, and only those) is observed by its own test. Expected
totals come from the released notebook's test cells (the instructor's solutions earn all their
points, the untouched stub none), never typed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import attention_course
from attention_course.classgrade.nbgrader_api import gradebook_scores
from attention_course.classgrade.run import STATE_DIR, autograde_class
from attention_course.cli.samples import sample_notebooks
from attention_course.course import Course
from attention_course.settings import DB_ENV
from tests.classgrade.test_class_grading import ASSIGNMENT, _write, fresh_course, write_sleepy
from tests.content.test_notebooks import cell_points

QUIZ = Course.load(Path(__file__).resolve().parents[2]).quiz_assignment


class Told:
    """What a run told its `progress`: the count it started with, and each "done"."""

    def __init__(self) -> None:
        self.start: int | None = None
        self.done: dict[str, str] = {}

    def __call__(self, kind: str, student, outcome) -> None:
        if kind == "start":
            self.start = student
        elif kind == "done":
            self.done[student] = outcome.status


def grade(course: Path, assignment: str = ASSIGNMENT, **options) -> tuple:
    told = Told()
    run = autograde_class(assignment, course, jobs=2, progress=told, **options)
    return run, told


def statuses(run) -> dict[str, str]:
    return {s: o.status for s, o in run.outcomes.items()}


@pytest.fixture(scope="module")
def small_class():
    """A fresh course: `full` (the instructor's solutions), `stub` (untouched), `broken`
    (not JSON) for the assignment, and one graded quiz, each graded once."""
    course = fresh_course("attention-small-class-")
    samples = sample_notebooks(ASSIGNMENT, course)
    paths = {
        "full": _write(course, "full", samples["demo-instructor"]),
        "stub": _write(course, "stub", samples["demo-stub"]),
    }
    _write(course, "broken", '{"cells": [ not json')
    quiz = course / "submitted" / "quizzer" / QUIZ / f"{QUIZ}.ipynb"
    quiz.parent.mkdir(parents=True)
    import nbformat

    nbformat.write(sample_notebooks(QUIZ, course)["demo-partial"], quiz)
    first, told = grade(course)
    quiz_run, _ = grade(course, QUIZ)
    yield course, paths, first, told, quiz_run
    shutil.rmtree(course.parent, ignore_errors=True)


def test_a_small_class_is_graded_once_each_and_every_outcome_recorded(small_class):
    course, paths, run, told, quiz_run = small_class
    assert run.ok and quiz_run.ok
    assert statuses(run) == {"broken": "not graded", "full": "graded", "stub": "graded"}
    assert "not valid JSON" in run.outcomes["broken"].reason
    want = {"full": sum(cell_points(ASSIGNMENT).values()), "stub": 0.0}
    assert {s: run.outcomes[s].total for s in paths} == want
    scores = gradebook_scores(ASSIGNMENT, course)
    assert {s: scores[s]["total"] for s in paths} == want
    assert told.start == 3 and told.done == statuses(run)
    for student in ("full", "stub", "broken"):  # what the next run compares with
        kept = json.loads((course / STATE_DIR / ASSIGNMENT / f"{student}.json").read_text())
        assert kept["status"] == run.outcomes[student].status
        assert kept["total"] == run.outcomes[student].total
        assert len(kept["fingerprint"]) == 64
    assert not list((course / STATE_DIR / ASSIGNMENT).glob("*.part"))
    assert (course / STATE_DIR / ASSIGNMENT / "jobs.log").exists()  # by grading jobs here,
    assert not (course / STATE_DIR / "workers").exists()  # not by Dask workers
    assert statuses(quiz_run) == {"quizzer": "graded"}


def test_a_second_run_grades_nothing_and_keeps_every_total(small_class):
    course, paths, first, _, _ = small_class
    run, told = grade(course)
    assert run.ok
    assert statuses(run) == dict.fromkeys(first.outcomes, "unchanged")
    assert {s: o.total for s, o in run.outcomes.items()} == {
        s: o.total for s, o in first.outcomes.items()
    }
    assert run.outcomes["broken"].reason == first.outcomes["broken"].reason
    assert told.start == 0 and told.done == {}  # nothing to tell


def test_a_changed_submission_is_graded_again_and_no_other(small_class):
    course, paths, first, _, _ = small_class
    paths["stub"].write_bytes(paths["full"].read_bytes())  # the student did it all
    run, told = grade(course)
    assert statuses(run) == {"broken": "unchanged", "full": "unchanged", "stub": "graded"}
    assert run.outcomes["stub"].total == first.outcomes["full"].total
    assert told.start == 1
    assert gradebook_scores(ASSIGNMENT, course)["stub"]["total"] == first.outcomes["full"].total


def test_a_chosen_student_alone_is_looked_at(small_class):
    course, _, _, _, _ = small_class
    run, told = grade(course, students=["broken"], force=True)
    assert statuses(run) == {"broken": "not graded"} and told.start == 1


def test_what_another_course_folder_graded_into_the_gradebook_is_not_graded_again(
    small_class, monkeypatch
):
    """A second course folder grading into the same gradebook, with the same submissions:
    each was graded in this very version by the first, as the gradebook's records say, so
    none is graded again, and this folder keeps the outcomes too."""
    course, _, _, _, _ = small_class
    other = fresh_course("attention-other-folder-")
    try:
        shutil.copytree(course / "submitted", other / "submitted")
        monkeypatch.setenv(DB_ENV, f"sqlite:///{course / 'gradebook.db'}")
        run, told = grade(other)
        assert statuses(run) == {"broken": "unchanged", "full": "unchanged", "stub": "unchanged"}
        assert told.start == 0
        kept = json.loads((other / STATE_DIR / ASSIGNMENT / "full.json").read_text())
        assert kept["total"] == sum(cell_points(ASSIGNMENT).values())
    finally:
        shutil.rmtree(other.parent, ignore_errors=True)


def test_where_no_sandbox_can_be_made_a_class_is_not_graded(small_class, tmp_path):
    """`autograde` on a machine without bubblewrap (a PATH without it): one line saying so,
    exit 2, before anything is looked at."""
    course, _, _, _, _ = small_class
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = str(tmp_path)
    command = [str(Path(sys.executable).parent / "attention-course"), "autograde", ASSIGNMENT]
    proc = subprocess.run(
        [*command, "--course", str(course)], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "cannot sandbox student code: bubblewrap is not installed" in line


def test_a_scheduler_that_cannot_be_reached_is_said_before_anything_is_graded(small_class):
    # distributed imported first: its defaults are in dask.config before the set below (a
    # set made before them takes them out again as it ends, for every later test here)
    import dask
    import distributed  # noqa: F401

    from attention_course.classgrade.nbgrader_api import CourseError

    course, _, _, _, _ = small_class
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "1s"}),
        pytest.raises(CourseError, match="^cannot reach the Dask scheduler at tcp://127.0.0.1:1"),
    ):
        autograde_class(ASSIGNMENT, course, force=True, scheduler="tcp://127.0.0.1:1")


def test_a_gradebook_that_does_not_answer_stops_the_run_in_one_line(small_class, monkeypatch):
    """A gradebook's fault that may pass (PostgreSQL not answering) is tried again, then is
    GradebookUnavailable: one line, not the database driver's exception."""
    from attention_course.errors import GradebookUnavailable
    from attention_course.settings import Retries

    course, _, _, _, _ = small_class
    monkeypatch.setenv(DB_ENV, "postgresql+psycopg://nobody@127.0.0.1:1/gradebook")
    with pytest.raises(GradebookUnavailable) as stopped:
        autograde_class(ASSIGNMENT, course, retries=Retries(attempts=1, first=0.01))
    assert "\n" not in str(stopped.value) and "127.0.0.1" in str(stopped.value)


def test_a_changed_reference_regrades_its_assignments_and_not_the_quiz(small_class):
    """The reference decides the graders' expected values: every submission of an assignment
    it grades is graded again; the quiz's grades do not depend on it."""
    course, _, _, _, _ = small_class
    reference = Course.load(course).reference_file
    reference.write_text(reference.read_text() + "\n# the instructor's note\n")
    run, told = grade(course)
    assert statuses(run) == {"broken": "not graded", "full": "graded", "stub": "graded"}
    assert told.start == 3
    quiz, told = grade(course, QUIZ)
    assert statuses(quiz) == {"quizzer": "unchanged"} and told.start == 0
    again, _ = grade(course)
    assert set(statuses(again).values()) == {"unchanged"}  # and graded once


def engine_copy(folder: Path) -> Path:
    """This engine as another installation of it: a copy of the package, first on the path."""
    package = Path(attention_course.__file__).parent
    shutil.copytree(package, folder / "attention_course", ignore=shutil.ignore_patterns("__py*"))
    return folder / "attention_course"


def autograde_with(engine: Path, course: Path, assignment: str) -> str:
    """`attention-course autograde` run with the engine at `engine`; its progress line."""
    env = dict(os.environ, PYTHONPATH=str(engine.parent))
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "attention_course.cli.main",
            "autograde",
            assignment,
            "--course",
            str(course),
        ],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "submissions to grade" in ln]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_a_changed_engine_regrades_what_it_grades_and_nothing_else(small_class, tmp_path):
    """An engine whose reports and quiz engine changed grades this assignment as before:
    nothing is regraded. One whose sandbox changed is another grading engine: the class is
    graded again (the fingerprint, docs/development.md)."""
    course, _, _, _, _ = small_class
    engine = engine_copy(tmp_path)
    assert engine.resolve() != Path(attention_course.__file__).parent.resolve()
    note = "\n# a comment added in a new version\n"
    for changed in ("reports/tables.py", "quiz/checking.py", "cli/autograde_command.py"):
        (engine / changed).write_text((engine / changed).read_text() + note)
    assert "0 of 3 submissions to grade" in autograde_with(engine, course, ASSIGNMENT)
    (engine / "sandbox" / "program.py").write_text(
        (engine / "sandbox" / "program.py").read_text() + note
    )
    assert "3 of 3 submissions to grade" in autograde_with(engine, course, ASSIGNMENT)


def test_jobs_started_ahead_of_a_run_that_waited_still_have_their_start_up_time(
    small_class, monkeypatch
):
    """A run starts its grading jobs before it looks at the submissions and the gradebook
    (their imports overlap that look); a look that took longer than a job's start-up may take
    (another run held the gradebook) does not count against the jobs: their start-up is timed
    from when the run has work for them."""
    import dataclasses
    import time

    from attention_course.classgrade import jobs, run

    course, paths, first, _, _ = small_class
    monkeypatch.setattr(jobs, "PACING", dataclasses.replace(jobs.PACING, job_start=6.0))
    looked = run._look

    def slow_look(*args, **kwargs):
        time.sleep(6.5)  # past the 6 s each job now has to start
        return looked(*args, **kwargs)

    monkeypatch.setattr(run, "_look", slow_look)
    paths["full"].write_bytes(paths["full"].read_bytes() + b" ")
    graded, told = grade(course)
    assert statuses(graded)["full"] == "graded" and graded.ok
    assert graded.outcomes["full"].total == first.outcomes["full"].total


def test_a_scheduler_given_without_tcp_is_a_cluster_that_needs_no_sandbox_here(
    small_class, monkeypatch
):
    """An address with no scheme (it sorts before "local") is a remote cluster's, whose
    workers check their own sandbox: this machine's is not asked for."""
    # distributed imported first: its defaults are in dask.config before the set below (a
    # set made before them takes them out again as it ends, for every later test here)
    import dask
    import distributed  # noqa: F401

    from attention_course.classgrade.nbgrader_api import CourseError
    from attention_course.errors import SandboxUnavailable
    from attention_course.sandbox import confined

    def no_sandbox(unsandboxed: bool = False):
        raise SandboxUnavailable("no sandbox on the client's machine")

    course, _, _, _, _ = small_class
    monkeypatch.setattr(confined, "require", no_sandbox)
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "1s"}),
        pytest.raises(CourseError, match="^cannot reach the Dask scheduler at "),
    ):
        autograde_class(ASSIGNMENT, course, force=True, scheduler="127.0.0.1:1")


def zygotes_of(pid: int) -> int:
    """How many of the process's children are zygotes (sandbox/zygotes.py's command line)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return sum(
        b"socket(fileno=0)" in Path(f"/proc/{child}/cmdline").read_bytes() for child in children
    )


@pytest.mark.parametrize("unsandboxed", [False, True])
def test_a_job_starts_its_zygotes_before_its_first_submission(small_class, tmp_path, unsandboxed):
    """A grading job starts its two zygotes (the notebook run's and the graders') as it starts,
    before any submission is sent: their imports overlap the run's look at its submissions.
    Unsandboxed, it starts none."""
    import select

    from attention_course.classgrade.jobs import GradingJob

    course = small_class[0]
    with open(tmp_path / "job.log", "w") as log:
        job = GradingJob.start(course, unsandboxed, log)
    try:
        while not job.ready:
            ready, _, _ = select.select([job], [], [], 120)
            replies = job.read() if ready else None
            assert replies is not None, (tmp_path / "job.log").read_text()
            job.ready = any(reply.get("ready") for reply in replies)
        assert zygotes_of(job.proc.pid) == (0 if unsandboxed else 2)
    finally:
        job.kill()


def test_a_local_run_starts_the_jobs_asked_for_at_least_one_and_no_more_than_submissions():
    from attention_course.classgrade.run import job_count

    assert [job_count(jobs, 5) for jobs in (-3, 0, 1, 2, 5, 8)] == [1, 1, 1, 2, 5, 5]
    assert job_count(4, 3) == 3 and job_count(1, 1) == 1


def test_jobs_are_started_anew_where_the_command_runs_other_threads(small_class):
    """`autograde` called in a process with other threads (a notebook's kernel) does not fork
    its jobs from it: they are started anew (`python -m attention_course.classgrade.job`)."""
    import threading

    from attention_course.classgrade.run import fork_jobs

    course = small_class[0]
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with fork_jobs(course, ASSIGNMENT, 1, True) as pool:
            (job,) = pool.jobs
            assert isinstance(job.proc, subprocess.Popen)
            assert "attention_course.classgrade.job" in job.proc.args
    finally:
        stop.set()
        other.join()


def _grading_jobs() -> list[int]:
    """The pids of this process's grading jobs (started anew: `...classgrade.job`)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"attention_course.classgrade.job" in argv:
            found.append(int(entry.name))
    return found


def test_a_grading_job_killed_mid_submission_is_a_fault_of_grading_the_next_run_grades(
    small_class,
):
    """The grading job of a submission is killed (SIGKILL from outside) while the notebook
    runs: the run says it is a fault of grading, records no outcome for it, ends not ok, and
    the next run grades the submission as if nothing had happened."""
    import signal
    import threading
    import time

    from attention_course.classgrade.jobs import State

    course, _, first, _, _ = small_class
    write_sleepy(course)
    lock = course / STATE_DIR / ASSIGNMENT / "sleepy.lock"
    killed: list[int] = []

    def kill_its_job() -> None:  # once the submission is claimed, and its notebook runs
        until = time.monotonic() + 60
        while not lock.exists() and time.monotonic() < until:
            time.sleep(0.05)
        time.sleep(1.5)
        for pid in _grading_jobs():
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    killer = threading.Thread(target=kill_its_job)
    killer.start()
    try:
        run, told = grade(course, students=["sleepy"])
    finally:
        killer.join()
    assert killed, "no grading job was found to kill"
    lost = run.outcomes["sleepy"]
    assert (lost.status, lost.reason) == ("error", "its grading process ended unexpectedly")
    assert not run.ok and told.done == {"sleepy": "error"}
    assert State(course, ASSIGNMENT).last("sleepy") == {}  # nothing recorded as its outcome
    again, _ = grade(course, students=["sleepy"])
    assert statuses(again) == {"sleepy": "graded"}
    assert again.outcomes["sleepy"].total == first.outcomes["full"].total
