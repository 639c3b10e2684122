"""Grading a class on a Dask cluster into a PostgreSQL gradebook: a real LocalCluster of two
worker processes and a real PostgreSQL server (both shared by the session), no mocks.

The class is the class-grading tests' class, lean: instructor solutions, partly correct and
untouched notebooks, one that lost its metadata, and four that cannot be graded. It is graded
once on this machine into SQLite, the reference the cluster's grading must match exactly.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest

from attention_course.classgrade.gradebook import DB_ENV
from attention_course.classgrade.nbgrader_api import gradebook_scores
from attention_course.classgrade.run import autograde_class
from attention_course.cli.samples import sample_notebooks
from tests.classgrade.test_class_grading import (
    ASSIGNMENT,
    CLI,
    REASONS,
    _stripped,
    _write,
    fresh_course,
    grading_jobs_of,
    run_cli,
    write_class,
)
from tests.course import COURSE_ROOT
from tests.processes import machine_load, wait_for_dask_workers

# `dask scheduler` writing its address: a deadline against one that never will, long enough
# for a machine whose every core is busy (tests/processes.py)
SCHEDULER_DEADLINE = 240.0


def lean_class(course: Path) -> None:
    write_class(course, 6)
    samples = sample_notebooks(ASSIGNMENT, course)
    _write(course, "stripped", _stripped(samples["demo-instructor"]))
    _write(course, "renamed", samples["demo-instructor"], "homework.ipynb")
    _write(course, "broken", '{"cells": [ not json')
    _write(course, "emptied", _stripped(samples["demo-instructor"], keep_functions=False))


def submission_rows(db_url: str) -> dict[str, int]:
    """student -> how many submissions of the assignment the gradebook holds."""
    conninfo = db_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo) as conn:
        rows = conn.execute(
            "SELECT s.student_id, count(*) FROM submitted_assignment s "
            "JOIN assignment a ON a.id = s.assignment_id WHERE a.name = %s "
            "GROUP BY s.student_id",
            (ASSIGNMENT,),
        ).fetchall()
    return dict(rows)


def scores_in(db_url: str, course: Path) -> dict:
    before = os.environ.get(DB_ENV)
    os.environ[DB_ENV] = db_url
    try:
        return gradebook_scores(ASSIGNMENT, course)
    finally:
        if before is None:
            del os.environ[DB_ENV]
        else:
            os.environ[DB_ENV] = before


@pytest.fixture(scope="module")
def local_grading():
    """The lean class graded here, two local jobs, into the course's SQLite gradebook."""
    course = fresh_course("attention-local-")
    lean_class(course)
    run = autograde_class(ASSIGNMENT, course, jobs=2)
    assert run.ok, run.outcomes
    yield course, run, gradebook_scores(ASSIGNMENT, course)
    shutil.rmtree(course.parent, ignore_errors=True)


def autograde_on(
    course: Path, db_url: str, scheduler: str, *more: str, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`attention-course autograde` of the course into `db_url` through `scheduler`."""
    return run_cli(
        "autograde",
        ASSIGNMENT,
        "--course",
        str(course),
        "--db",
        db_url,
        "--scheduler",
        scheduler,
        *more,
        timeout=timeout,
    )


def test_the_local_cluster_runs_without_the_dask_work_grading_has_no_use_for(dask_client):
    """The engine's local cluster (what `--scheduler local` starts; the one these tests use)
    runs with settings.DASK_CONFIG, scheduler and workers as it starts them (this test comes
    before the one that kills a worker): no statistical profiler sampling the threads of a
    worker that waits on its grading job, the event loops checked each second, not every
    20 ms, and no work stealing."""
    import dask

    from attention_course.settings import DASK_CONFIG

    def what_runs(server) -> dict:  # (defined here: sent to the workers by value)
        """What of Dask's own periodic work a scheduler or worker does, and how often (ms)."""
        calls = server.periodic_callbacks
        return {
            "profiler": "profile" in calls,
            "tick": calls["tick"].callback_time,
            "stealing": "stealing" in getattr(server, "extensions", {}),
        }

    def on_worker(dask_worker) -> dict:
        return {
            **what_runs(dask_worker),
            "config": {k: dask.config.get(k) for k in DASK_CONFIG},
            "preloaded": [preload.name for preload in dask_worker.preloads],
        }

    workers = dask_client.run(on_worker)
    assert len(workers) == 2
    for seen in workers.values():
        assert seen == {
            "profiler": False,
            "tick": 1000,
            "stealing": False,
            "config": DASK_CONFIG,
            "preloaded": ["attention_course.classgrade.cluster"],
        }
    seen = dask_client.run_on_scheduler(lambda dask_scheduler: what_runs(dask_scheduler))
    assert seen == {"profiler": False, "tick": 1000, "stealing": False}


def test_dask_into_postgresql_gives_exactly_the_scores_of_local_grading_into_sqlite(
    local_grading, postgres, dask_client
):
    local, local_run, local_scores = local_grading
    course = fresh_course("attention-dask-")
    try:
        shutil.copytree(local / "submitted", course / "submitted")
        db_url = postgres.new_database()
        proc = autograde_on(course, db_url, dask_client.scheduler.address, timeout=900)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        assert scores_in(db_url, course) == local_scores
        assert submission_rows(db_url) == {student: 1 for student in local_scores}
        count = len(local_scores)
        assert f"{count} of {count} submissions to grade" in proc.stderr  # the same progress
        assert " s00: graded (35 points)" in proc.stderr
        for student, words in REASONS.items():
            if student in local_run.outcomes:
                assert f"{student}: not graded: " in proc.stdout and words in proc.stdout
        feedback = course / "feedback" / "s01" / ASSIGNMENT / f"{ASSIGNMENT}.html"
        assert feedback.exists()  # written on a worker, into the shared course folder
        again = autograde_on(course, db_url, dask_client.scheduler.address)
        assert again.returncode == 0, again.stderr
        assert f"0 of {count} submissions to grade" in again.stderr  # the same state: resumable
        local_cluster = autograde_on(
            course, db_url, "local", "--jobs", "1", "--student", "s01", "--force"
        )
        assert local_cluster.returncode == 0, local_cluster.stderr
        assert f" s01: graded ({local_scores['s01']['total']:g} points)" in local_cluster.stderr
        assert scores_in(db_url, course) == local_scores
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)


def _executing(dask_worker) -> list[str]:
    return [str(ts.key) for ts in dask_worker.state.executing]


def _parent(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    return 0


def test_a_worker_killed_while_grading_leaves_every_submission_graded_exactly_once(
    local_grading, postgres, dask_client
):
    _, _, local_scores = local_grading
    course = fresh_course("attention-dask-kill-")
    students = [f"s{i:02d}" for i in range(6)]
    try:
        write_class(course, 6)  # the same notebooks as the local class's s00..s05
        db_url = postgres.new_database()
        told: list[tuple[str, str]] = []
        result: dict = {}

        def grade() -> None:
            os.environ[DB_ENV] = db_url
            try:
                result["run"] = autograde_class(
                    ASSIGNMENT,
                    course,
                    scheduler=dask_client,
                    progress=lambda kind, student, _: told.append((kind, student)),
                )
            except BaseException as exc:  # noqa: BLE001 (reported by the test below)
                result["error"] = exc
            finally:
                del os.environ[DB_ENV]

        pids = dask_client.run(os.getpid)
        grader = threading.Thread(target=grade)
        grader.start()
        victim, seen, deadline = None, {}, time.monotonic() + 300
        while victim is None and time.monotonic() < deadline and grader.is_alive():
            for address, keys in dask_client.run(_executing).items():
                for key in keys:
                    seen.setdefault((address, key), time.monotonic())
                    if time.monotonic() - seen[(address, key)] > 1.0:  # well into grading
                        victim = (address, key)
            time.sleep(0.1)
        assert victim is not None, "no worker was seen grading"
        os.kill(pids[victim[0]], signal.SIGKILL)
        killed_student = victim[1].split("-")[2]
        grader.join(timeout=600)
        assert not grader.is_alive() and "error" not in result, result
        run = result["run"]
        assert run.ok
        assert {s: o.status for s, o in run.outcomes.items()} == dict.fromkeys(students, "graded")
        done = [student for kind, student in told if kind == "done"]
        assert sorted(done) == students  # each told once: none lost, none counted twice
        assert submission_rows(db_url) == dict.fromkeys(students, 1)
        scores = scores_in(db_url, course)
        assert scores == {s: local_scores[s] for s in students}
        assert killed_student in students
        # the killed worker's grading job died with it; the jobs left belong to live workers
        alive = set(dask_client.run(os.getpid).values())
        assert pids[victim[0]] not in alive
        assert all(_parent(pid) in alive for pid in grading_jobs_of(course))
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)


def test_an_unreachable_scheduler_is_a_one_line_error_before_any_grading(tmp_path):
    from attention_course.classgrade.nbgrader_api import copy_course

    course = copy_course(tmp_path / "course", COURSE_ROOT)
    write_class(course, 1)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env.update(PATH="/usr/bin:/bin", DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="2s")
    cmd = ["autograde", ASSIGNMENT, "--course", str(course), "--scheduler", "tcp://127.0.0.1:1"]
    proc = subprocess.run([*CLI, *cmd], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(
        "attention-course: error: cannot reach the Dask scheduler at tcp://127.0.0.1:1"
    )
    assert "submissions to grade" not in proc.stderr and "Traceback" not in proc.stderr


# ---- the claim is the worker's: one grading of a submission at a time, whatever Dask does

HELD = re.compile(r" released (\S+)/(\S+) for (\S+) held (\S+) (\S+): (\S+)")
CLAIMED = re.compile(r" claimed (\S+)/(\S+) for (\S+)$")


def worker_log(course: Path) -> str:
    folder = course / ".grading" / "workers"
    return "".join(path.read_text() for path in sorted(folder.glob("*.log")))


def claims_of(course: Path) -> list[tuple[str, str, float, float, str]]:
    """(student, task key, from, to, outcome) of every claim the workers let go of."""
    found = []
    for line in worker_log(course).splitlines():
        if match := HELD.search(line):
            _, student, key, start, end, status = match.groups()
            found.append((student, key, float(start), float(end), status))
    return found


def claims_taken(course: Path) -> set[tuple[str, str]]:
    """(student, task key) of every claim the workers took."""
    lines = worker_log(course).splitlines()
    return {m.group(2, 3) for line in lines if (m := CLAIMED.search(line))}


def open_claims(course: Path) -> set[tuple[str, str]]:
    """(student, task key) of the claims a worker holds now."""
    return claims_taken(course) - {(student, key) for student, key, *_ in claims_of(course)}


def assert_never_twice_at_once(course: Path) -> None:
    spans: dict[str, list[tuple[float, float]]] = {}
    for student, _, start, end, _ in claims_of(course):
        spans.setdefault(student, []).append((start, end))
    assert spans, "no worker graded anything"
    for student, held in spans.items():
        held.sort()
        for (_, end), (start, _) in itertools.pairwise(held):
            assert start >= end, f"{student} was graded twice at once: {held}"


def graded_counts(course: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for student, _, _, _, status in claims_of(course):
        counts[student] = counts.get(student, 0) + (status == "graded")
    return counts


def assert_graded_once(course: Path, db_url: str, students: list[str], local_scores) -> None:
    """Each of `students` graded once (one "graded" claim in the workers' logs, one submission
    row in the gradebook), with the scores of local grading."""
    assert graded_counts(course) == dict.fromkeys(students, 1)
    assert submission_rows(db_url) == dict.fromkeys(students, 1)
    assert scores_in(db_url, course) == {s: local_scores[s] for s in students}


def task_of(course: Path, student: str, force: bool = False, **changes) -> dict:
    from attention_course.classgrade.cluster import make_tasks
    from attention_course.classgrade.jobs import ClassRun, _fingerprint
    from attention_course.grading.fingerprint import grading_code
    from attention_course.grading.submissions import inspect

    found = inspect(course, ASSIGNMENT, student, grading_code(ASSIGNMENT, course))
    run = ClassRun(ASSIGNMENT, {}, force=force)
    task = make_tasks(course, run, True, False, 300.0)(student, _fingerprint(found))
    return {**task, **changes}


def test_a_task_that_finds_its_submission_claimed_says_busy_and_records_nothing(postgres):
    """The task claims the submission itself: the lock file in .grading/ (another run on a
    worker of this file system) and the gradebook's advisory lock (one on another machine)."""
    from attention_course.classgrade.cluster import grade_submission
    from attention_course.classgrade.gradebook import SubmissionLocks
    from attention_course.classgrade.jobs import State
    from attention_course.classgrade.nbgrader_api import gradebook_settings

    course = fresh_course("attention-dask-busy-")
    try:
        write_class(course, 1)
        db_url = postgres.new_database()
        os.environ[DB_ENV] = db_url
        try:
            _, course_id = gradebook_settings(course)
            task = task_of(course, "s00", patience=0.5)
        finally:
            del os.environ[DB_ENV]
        state = State(course, ASSIGNMENT)
        elsewhere = SubmissionLocks(db_url, course_id, ASSIGNMENT)
        try:
            assert state.lock("s00")  # a run grading it on this file system
            said = grade_submission(task)
            assert (said["status"], said["reason"]) == (
                "busy",
                "being graded elsewhere (another run or task)",
            )
            state.unlock("s00")
            assert elsewhere.acquire("s00")  # a run grading it on another machine
            assert grade_submission(task)["status"] == "busy"
        finally:
            elsewhere.close()
            state.close()
        assert state.last("s00") == {}  # nothing final recorded
        assert not (course / "autograded").exists()  # and nothing graded
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)


def test_a_dask_worker_refuses_a_task_sent_by_other_grading_code(dask_client):
    """A run's tasks carry the digest of its grading code; a worker that sees other graders
    (here: one changed after the run sent its tasks) or runs another engine grades nothing,
    records nothing and says why."""
    from attention_course.classgrade.cluster import grade_submission
    from attention_course.classgrade.jobs import State

    course = fresh_course("attention-dask-code-")
    try:
        write_class(course, 1)
        task = task_of(course, "s00")
        grader = course / "grader_tests" / "test_softmax.py"
        grader.write_text(grader.read_text() + "\n# changed after the run sent its tasks\n")
        future = dask_client.submit(grade_submission, task, key=task["key"], pure=False)
        said = future.result(timeout=120)
        assert said["status"] == "error", said
        assert "has other graders or another version of attention-course" in said["reason"]
        workers = set(dask_client.run(os.getpid).values())
        assert int(said["worker"].rsplit(":", 1)[1]) in workers - {os.getpid()}
        assert State(course, ASSIGNMENT).last("s00") == {}
        assert not (course / "autograded").exists()
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)


def test_one_submission_sent_twice_at_once_is_graded_once(local_grading, postgres, dask_client):
    """Two tasks of one submission at once (a task Dask runs again, a run started twice):
    the one that claims it grades it, the other waits for the claim and finds it graded."""
    from attention_course.classgrade.cluster import grade_submission
    from attention_course.classgrade.nbgrader_api import add_students, register

    _, _, local_scores = local_grading
    course = fresh_course("attention-dask-twice-")
    try:
        write_class(course, 2)
        db_url = postgres.new_database()
        os.environ[DB_ENV] = db_url
        try:
            register(ASSIGNMENT, course)
            add_students(["s01"], course)
            tasks = [task_of(course, "s01", key=f"twice-{i}", patience=600) for i in range(2)]
        finally:
            del os.environ[DB_ENV]
        futures = [dask_client.submit(grade_submission, t, key=t["key"]) for t in tasks]
        said = dask_client.gather(futures)
        assert sorted(s["status"] for s in said) == ["graded", "unchanged"], said
        assert len({s["worker"] for s in said}) == 2  # one on each worker, at once
        assert_never_twice_at_once(course)
        assert_graded_once(course, db_url, ["s01"], local_scores)
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)


class DaskProcesses:
    """A Dask scheduler and a worker of two processes (one thread each), each started as
    `dask scheduler` and `dask worker` of this environment start them, in their own process
    groups: killed as an operator's machine loses them."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.procs: list[subprocess.Popen] = []
        self.scheduler: subprocess.Popen | None = None
        self.address = ""

    def _start(self, *argv: str) -> subprocess.Popen:
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        log = open(self.folder / "dask.log", "a")  # noqa: SIM115 (the process keeps it)
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "dask"), *argv],
            cwd=self.folder,
            env=env,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        self.procs.append(proc)
        return proc

    def start(self, workers: int = 2) -> DaskProcesses:
        from distributed import Client

        where = self.folder / "scheduler.json"
        where.unlink(missing_ok=True)  # a scheduler stopped before left its own
        self.scheduler = self._start(
            "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
            "--scheduler-file", str(where),
        )  # fmt: skip
        start = time.monotonic()
        while not where.exists():
            waited = time.monotonic() - start
            if self.scheduler.poll() is not None or waited > SCHEDULER_DEADLINE:
                pytest.fail(
                    f"waited {waited:.0f} s for `dask scheduler` to write {where}: "
                    + (f"it ended ({self.scheduler.returncode})" if self.scheduler.poll()
                       is not None else "not written")
                    + f" ({machine_load()}); dask.log ends:\n{self.log()}",
                    pytrace=False,
                )  # fmt: skip
            time.sleep(0.1)
        self.address = json.loads(where.read_text())["address"]
        worker = self._start_workers(workers)
        with Client(self.address) as client:

            def missing() -> None:  # a worker process that ended: the ones missing, again
                have = len(client.scheduler_info(n_workers=-1).get("workers", {}))
                if have < workers:
                    self._start_workers(workers - have)

            wait_for_dask_workers(
                client,
                workers,
                f"`dask worker --nworkers {workers}` (pid {worker.pid})",
                died=lambda: (
                    f"`dask scheduler` ended ({self.scheduler.returncode})"
                    if self.scheduler.poll() is not None
                    else None
                ),
                retry=missing,
                log=self.log,
            )
        return self

    def _start_workers(self, workers: int) -> subprocess.Popen:
        return self._start("worker", self.address, "--nworkers", str(workers), "--nthreads", "1",
                           "--no-dashboard")  # fmt: skip

    def log(self, lines: int = 30) -> str:
        text = (self.folder / "dask.log").read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def stop(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        self.procs.clear()


@pytest.fixture(scope="module")
def dask_processes(tmp_path_factory):
    cluster = DaskProcesses(tmp_path_factory.mktemp("dask")).start()
    yield cluster
    cluster.stop()


def start_autograde(course: Path, *more: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = "/usr/bin:/bin"
    cmd = [*CLI, "autograde", ASSIGNMENT, "--course", str(course), *more]
    return subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)


def until_first_graded(proc: subprocess.Popen) -> list[str]:
    """The lines the run writes, up to the first submission graded."""
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if re.match(r"\s+1/\d+ s\d\d: graded", line):
            return lines
    raise AssertionError("the run ended before it graded anything:\n" + "".join(lines))


def test_a_client_killed_mid_run_stops_its_tasks_and_the_rerun_grades_each_once(
    local_grading, postgres, dask_processes
):
    _, _, local_scores = local_grading
    course = fresh_course("attention-dask-client-")
    # five, so that when the first is graded some are still unclaimed on two workers (with
    # three, both others could already be claimed, and no task would start after it)
    students = [f"s{i:02d}" for i in range(5)]
    try:
        write_class(course, len(students))
        db_url = postgres.new_database()
        more = ("--db", db_url, "--scheduler", dask_processes.address)
        client = start_autograde(course, *more)
        watchdog = threading.Timer(600, client.kill)
        watchdog.start()
        try:
            until_first_graded(client)
            before = claims_taken(course)
            deadline = time.monotonic() + 120
            while not open_claims(course) - before and time.monotonic() < deadline:
                time.sleep(0.05)  # until a worker starts grading the next one
            fresh = open_claims(course) - before
            client.kill()  # kill -9, with its tasks on the workers
            client.wait()
        finally:
            watchdog.cancel()
        assert fresh, "no task was started after the first was graded"
        rerun = run_cli("autograde", ASSIGNMENT, "--course", str(course), *more, timeout=600)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        assert "Traceback" not in rerun.stderr
        assert_never_twice_at_once(course)
        assert not open_claims(course)  # the killed client's tasks all ended
        ends = {(s, k): status for s, k, _, _, status in claims_of(course)}
        assert {ends[claim] for claim in fresh} == {"stopped"}  # just started: stopped
        assert_graded_once(course, db_url, students, local_scores)
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)


def test_the_scheduler_lost_mid_run_is_one_line_and_the_same_command_finishes(
    local_grading, postgres, dask_processes
):
    _, _, local_scores = local_grading
    course = fresh_course("attention-dask-scheduler-")
    students = [f"s{i:02d}" for i in range(3)]
    try:
        write_class(course, len(students))
        db_url = postgres.new_database()
        lost = dask_processes.address
        run = start_autograde(course, "--db", db_url, "--scheduler", lost)
        watchdog = threading.Timer(600, run.kill)
        watchdog.start()
        try:
            told = until_first_graded(run)
            assert dask_processes.scheduler is not None
            dask_processes.scheduler.kill()
            _, rest = run.communicate()
        finally:
            watchdog.cancel()
        said = "".join(told) + rest
        assert run.returncode == 1, said
        assert "Traceback" not in said
        errors = [line for line in said.splitlines() if "error" in line.lower()]
        assert errors == [said.splitlines()[-1]], said  # one line, the last
        assert errors[0].startswith(f"attention-course: error: lost the Dask scheduler at {lost}: ")
        dask_processes.stop()  # its workers too (they lost their scheduler)
        recorded = {p.stem: json.loads(p.read_text()) for p in
                    (course / ".grading" / ASSIGNMENT).glob("*.json")}  # fmt: skip
        assert recorded, "the first submission's grade was not kept"
        assert {r["status"] for r in recorded.values()} == {"graded"}  # nothing else final
        dask_processes.start(workers=1)  # back (one worker process: fewer grading jobs to start)
        again = autograde_on(course, db_url, dask_processes.address)
        assert again.returncode == 0, again.stdout + again.stderr
        assert f"{len(students) - len(recorded)} of {len(students)} submissions to grade" in (
            again.stderr
        )
        assert_graded_once(course, db_url, students, local_scores)
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)
