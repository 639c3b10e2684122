"""Grading a class on a Dask cluster into a PostgreSQL gradebook: a real LocalCluster of two
worker processes and a real PostgreSQL server (both shared by the session), no mocks.

The class is the class-grading tests' class, lean: instructor solutions, partly correct and
untouched notebooks, one that lost its metadata, and four that cannot be graded. It is graded
once on this machine into SQLite, the reference the cluster's grading must match exactly.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
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
        assert " s01: graded (25 points)" in local_cluster.stderr
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
