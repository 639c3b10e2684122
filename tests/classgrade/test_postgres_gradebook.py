"""A course graded into a PostgreSQL gradebook (a real server, shared by the session): two
graders at once, each on a machine of its own (its own course folder, one gradebook), on
disjoint and on overlapping students; every command, nbgrader's own and formgrader against it;
a second course folder that sees what the first graded; the server stopped mid-class.
"""

from __future__ import annotations

import csv
import json
import os
import re
import select
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import psycopg
import pytest

from attention_course.classgrade.gradebook import DB_ENV, SubmissionLocks
from attention_course.classgrade.jobs import GradingJob
from attention_course.classgrade.nbgrader_api import gradebook_settings
from attention_course.classgrade.run import autograde_class
from attention_course.reports.tables import class_run_lines
from attention_course.settings import Retries
from tests.classgrade.test_class_grading import (
    ASSIGNMENT,
    CLI,
    expected_total,
    fresh_course,
    write_class,
)
from tests.classgrade.test_cluster_grading import scores_in, submission_rows
from tests.course import COURSE_ROOT

STUDENTS = [f"s{i:02d}" for i in range(6)]
CLASS = STUDENTS[:4]  # the classes whose gradebook a test stops


def nbgrader_export(course: Path, db_url: str, out: Path) -> list[dict[str, str]]:
    """`nbgrader export --to OUT` of the course (nbgrader's own command, which finds the
    gradebook through the environment variable, run in the course folder): its rows."""
    env = dict(_env(), **{DB_ENV: db_url})
    env["PATH"] = f"{Path(CLI[0]).parent}:{env['PATH']}"
    done = subprocess.run(
        [str(Path(CLI[0]).parent / "nbgrader"), "export", "--to", str(out)],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with open(out) as f:
        return list(csv.DictReader(f))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", DB_ENV)}
    env["PATH"] = "/usr/bin:/bin"  # as a user starts it: the environment's scripts not on PATH
    return env


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=_env(), timeout=600, **kwargs
    )


def two_graders(db_url: str, first: list[str], second: list[str]):
    """Two autograde runs started at once, each in a course folder of its own (two machines)
    holding the same class, into one gradebook. Returns ([course], [CompletedProcess])."""
    courses = [fresh_course("attention-grader-a-"), fresh_course("attention-grader-b-")]
    for course in courses:
        write_class(course, len(STUDENTS))
    procs = []
    for course, students in zip(courses, (first, second), strict=True):
        picks = [arg for student in students for arg in ("--student", student)]
        cmd = ["autograde", ASSIGNMENT, "--course", str(course), "--db", db_url, "--jobs", "1"]
        procs.append(
            subprocess.Popen(
                [*CLI, *cmd, *picks],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=_env(),
            )
        )
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return courses, done


@pytest.fixture(scope="module")
def expected():
    """Each student's total, from the graders themselves (s00..s05 cycle through three
    notebooks: computed once per notebook)."""
    course = fresh_course("attention-expected-")
    paths = write_class(course, len(STUDENTS))
    totals = [expected_total(paths[student]) for student in STUDENTS[:3]]
    shutil.rmtree(course.parent, ignore_errors=True)
    return {student: totals[i % 3] for i, student in enumerate(STUDENTS)}


def outcomes(proc: subprocess.CompletedProcess) -> dict[str, str]:
    """student -> what its progress line says (graded, busy ...)."""
    found = {}
    for line in proc.stderr.splitlines():
        parts = line.split()
        if len(parts) >= 3 and "/" in parts[0] and parts[1].endswith(":"):
            found[parts[1].rstrip(":")] = parts[2]
    return found


@pytest.fixture(scope="module")
def disjoint(postgres):
    db_url = postgres.new_database()
    courses, procs = two_graders(db_url, STUDENTS[:3], STUDENTS[3:])
    yield db_url, courses, procs, postgres.sessions(db_url)
    for course in courses:
        shutil.rmtree(course.parent, ignore_errors=True)


def test_two_graders_at_once_on_disjoint_students(disjoint, expected):
    db_url, courses, procs, _ = disjoint
    for proc in procs:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr and "error" not in proc.stdout
    assert outcomes(procs[0]) == dict.fromkeys(STUDENTS[:3], "graded")
    assert outcomes(procs[1]) == dict.fromkeys(STUDENTS[3:], "graded")
    assert submission_rows(db_url) == dict.fromkeys(STUDENTS, 1)
    totals = {s: cells["total"] for s, cells in scores_in(db_url, courses[0]).items()}
    assert totals == expected


# A class run's own connections to the gradebook, however large the class (about 10 measured,
# the first run making the tables): its checks, the advisory locks' connection, the records'
# pool, the score table, one pool per grading job.
RUN_CONNECTIONS = 15


def test_the_gradebook_is_opened_once_per_run_not_once_per_step(disjoint):
    """nbgrader opens its gradebook anew at each step of an autograde (about ten connections
    per submission); a grading job shares one pool between all its submissions."""
    _, _, procs, sessions = disjoint
    assert sessions <= len(procs) * RUN_CONNECTIONS, f"{sessions} connections for 6 submissions"


def test_two_graders_at_once_on_overlapping_students(postgres, expected):
    db_url = postgres.new_database()
    both = STUDENTS[2:4]  # each run starts with the students both grade
    courses, procs = two_graders(db_url, both + STUDENTS[:2], both + STUDENTS[4:])
    try:
        for proc in procs:
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert "Traceback" not in proc.stderr and "error" not in proc.stdout
        said = [outcomes(proc) for proc in procs]
        assert sorted(said[0]) == STUDENTS[:4] and sorted(said[1]) == STUDENTS[2:]
        for student in STUDENTS[2:4]:  # graded by one; the other found it busy or done
            assert sorted((said[0][student], said[1][student])) in (
                ["busy", "graded"],
                ["graded", "unchanged"],  # the gradebook's records: graded by the other
            ), said
        assert submission_rows(db_url) == dict.fromkeys(STUDENTS, 1)
        totals = {s: cells["total"] for s, cells in scores_in(db_url, courses[1]).items()}
        assert totals == expected
    finally:
        for course in courses:
            shutil.rmtree(course.parent, ignore_errors=True)


def test_a_submission_another_machine_grades_is_left_to_it(disjoint, expected, monkeypatch):
    """Another grader's claim is seen without any shared folder: the gradebook's lock."""
    db_url, _, _, _ = disjoint
    course = fresh_course("attention-grader-c-")  # a third machine, the same gradebook
    try:
        write_class(course, 3)
        monkeypatch.setenv(DB_ENV, db_url)
        _, course_id = gradebook_settings(course)
        other = SubmissionLocks(db_url, course_id, ASSIGNMENT)
        assert other.acquire("s01")
        # --force: the gradebook holds both, graded by the first course folder
        run = autograde_class(ASSIGNMENT, course, students=["s01", "s02"], jobs=1, force=True)
        assert run.outcomes["s01"].status == "busy"
        assert run.outcomes["s01"].reason == "being graded by another run"
        assert run.outcomes["s02"].status == "graded" and run.ok
        other.close()
        run = autograde_class(ASSIGNMENT, course, students=["s01"], jobs=1, force=True)
        assert run.outcomes["s01"].status == "graded"
        assert run.outcomes["s01"].total == expected["s01"]
        run = autograde_class(ASSIGNMENT, course, jobs=1)  # s00 graded elsewhere, never here
        assert {s: o.status for s, o in run.outcomes.items()} == dict.fromkeys(
            STUDENTS[:3], "unchanged"
        )
        assert submission_rows(db_url) == dict.fromkeys(STUDENTS, 1)
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)


def test_scores_report_and_nbgrader_export_read_the_shared_gradebook(disjoint, expected, tmp_path):
    db_url, courses, _, _ = disjoint
    course = courses[0]  # graded s00..s02 itself; the other grader s03..s05
    proc = cli("scores", ASSIGNMENT, "--course", str(course), "--db", db_url)
    assert proc.returncode == 0, proc.stderr
    for student in STUDENTS:
        assert student in proc.stdout
    proc = cli("report", ASSIGNMENT, "--course", str(course), "--db", db_url, "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "scores.csv") as f:
        total = [row for row in csv.DictReader(f) if row["function"] == "total"][0]
    assert int(total["students"]) == len(STUDENTS)
    mean = sum(expected.values()) / len(STUDENTS)
    assert float(total["mean"]) == pytest.approx(mean, rel=1e-5)  # written to 6 digits
    rows = nbgrader_export(course, db_url, tmp_path / "grades.csv")
    exported = {r["student_id"]: float(r["score"]) for r in rows}
    assert exported == expected


def test_formgrader_shows_the_shared_gradebook(disjoint, expected, tmp_path, monkeypatch):
    from tests.browser.lab import start_lab

    db_url, courses, _, _ = disjoint
    # formgrader lists a submission it finds in submitted/ but not in autograded/ as not
    # graded: it is shown the course folder both graders share (their autograded copies)
    shared = courses[1]
    shutil.copytree(courses[0] / "autograded", shared / "autograded", dirs_exist_ok=True)
    monkeypatch.setenv(DB_ENV, db_url)  # the instructor's JupyterLab environment
    lab = start_lab(shared, tmp_path)
    try:
        url = lab.url(f"/formgrader/api/submissions/{ASSIGNMENT}")
        request = urllib.request.Request(url, headers=lab.headers())
        with urllib.request.urlopen(request, timeout=60) as response:
            submissions = json.loads(response.read())
    finally:
        lab.stop()
    shown = {s["student"]: s["score"] for s in submissions if s["autograded"]}
    assert shown == expected


def test_release_records_the_assignments_in_a_new_postgresql_database(disjoint, postgres):
    _, courses, _, _ = disjoint
    db_url = postgres.new_database()
    proc = cli("release", ASSIGNMENT, "--course", str(courses[0]), "--db", db_url)
    assert proc.returncode == 0, proc.stderr
    with psycopg.connect(db_url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM assignment")]
        cells = conn.execute("SELECT count(*) FROM grade_cells").fetchone()[0]
    assert names == [ASSIGNMENT] and cells > 0


@pytest.mark.parametrize(
    "db, words",
    [
        ("postgresql://attention@127.0.0.1:1/gradebook", "Connection refused"),
        ("{server}/missing", 'database "missing" does not exist'),
        ("mysql://someone@127.0.0.1/gradebook", "not a PostgreSQL"),
    ],
)
def test_a_gradebook_that_cannot_be_reached_is_a_one_line_error(postgres, tmp_path, db, words):
    from attention_course.classgrade.nbgrader_api import copy_course

    course = copy_course(tmp_path / "course", COURSE_ROOT)
    db = db.format(server=postgres.url("postgres").rsplit("/", 1)[0])
    proc = cli("scores", ASSIGNMENT, "--course", str(course), "--db", db)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert words in proc.stderr


def test_a_second_course_folder_reports_and_keeps_what_the_first_graded(disjoint, tmp_path):
    """The gradebook is the one truth: the folder that graded s00..s02 neither calls s03..s05
    (graded by the other folder) "not autograded" nor grades them again."""
    db_url, courses, _, _ = disjoint
    course = courses[0]
    proc = cli("report", ASSIGNMENT, "--course", str(course), "--db", db_url, "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Not autograded" not in proc.stdout, proc.stdout
    shown = re.sub(r"\\(.)", r"\1", proc.stdout)  # the Markdown as it reads (escapes undone)
    assert "s03, s04, s05: graded by another course folder" in shown
    proc = cli("autograde", ASSIGNMENT, "--course", str(course), "--db", db_url, "--jobs", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"0 of {len(STUDENTS)} submissions to grade" in proc.stderr
    assert f"{len(STUDENTS)} unchanged since last graded" in proc.stdout
    assert submission_rows(db_url) == dict.fromkeys(STUDENTS, 1)


def _graded_line(line: str) -> bool:
    return ": graded (" in line


def test_a_postgresql_crash_mid_class_is_ridden_out(postgres, expected):
    """The server is stopped at once (`pg_ctl stop -m immediate`) when the first submission
    is graded and started again some seconds later: the run tries the gradebook again (its
    lock connection too) and grades every student once, with the fault-free scores."""
    db_url = postgres.new_database()
    course = fresh_course("attention-crash-")
    write_class(course, len(CLASS))
    cmd = ["autograde", ASSIGNMENT, "--course", str(course), "--db", db_url, "--jobs", "1"]
    proc = subprocess.Popen(
        [*CLI, *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()
    )
    assert proc.stderr is not None and proc.stdout is not None
    said = []
    try:
        for line in proc.stderr:  # progress: a line per submission (not a terminal)
            said.append(line)
            if _graded_line(line):
                break
        postgres.crash()
        time.sleep(4)  # the outage (the run is not told when it ends)
        postgres.restart()
        out, err = proc.communicate(timeout=900)
        err = "".join(said) + err
        assert proc.returncode == 0, out + err
        assert "Traceback" not in err, err
        done = outcomes(subprocess.CompletedProcess(cmd, 0, out, err))
        assert done == dict.fromkeys(CLASS, "graded"), err
        assert submission_rows(db_url) == dict.fromkeys(CLASS, 1)
        totals = {s: cells["total"] for s, cells in scores_in(db_url, course).items()}
        assert totals == {s: expected[s] for s in CLASS}
        again = cli(*cmd)
        assert again.returncode == 0, again.stderr
        assert f"0 of {len(CLASS)} submissions to grade" in again.stderr
    finally:
        if proc.poll() is None:
            proc.kill()
        _up(postgres)
        shutil.rmtree(course.parent, ignore_errors=True)


def _up(postgres) -> None:
    """The session's server running again, whatever a test left."""
    try:
        psycopg.connect(postgres.url().replace("+psycopg", ""), connect_timeout=3).close()
    except psycopg.Error:
        postgres.restart()


def _ask_a_job(course: Path, student: str) -> dict:
    """The reply of a grading job (classgrade/job.py, as a run starts it) to one task."""
    log = course.parent / "job.log"
    with open(log, "a") as out:
        job = GradingJob.start(course, False, out)
    try:
        replies: list[dict] = []
        while not replies:
            ready, _, _ = select.select([job], [], [], 300)
            assert ready, log.read_text()
            got = job.read()
            assert got is not None, log.read_text()
            if any(r.get("ready") for r in got) and not job.task:
                job.send(ASSIGNMENT, student, False, 300)
            replies = [r for r in got if r.get("student") == student]
        return replies[0]
    finally:
        job.kill()


def test_a_gradebook_down_past_the_retries_is_graded_by_the_same_command_again(
    postgres, expected, monkeypatch
):
    """The server stays down longer than the run tries it: the submissions it could not grade
    (the one being graded when the server stopped, the ones not claimed yet) are grading's
    faults, never the student's (said in a line each, not recorded, the run not ok), and the
    same command again, no --force, grades exactly those."""
    db_url = postgres.new_database()
    course = fresh_course("attention-down-")
    write_class(course, len(CLASS))
    monkeypatch.setenv(DB_ENV, db_url)
    crashed: list[str] = []

    def progress(kind, student, outcome) -> None:
        if kind == "done" and outcome.status == "graded" and not crashed:
            postgres.crash()  # before this run claims the next submission
            crashed.append(student)

    try:
        run = autograde_class(
            ASSIGNMENT, course, jobs=2, progress=progress, retries=Retries(1, 0.2, 0.2)
        )
        # a grading job that meets the stopped server says so: never the student's outcome
        reply = _ask_a_job(course, "s02")
        postgres.restart()
        assert reply["graded"] is False and reply["side"] == "transient", reply
        assert reply["reason"].startswith("the gradebook's database failed: "), reply
        assert not run.ok
        status = {s: o.status for s, o in run.outcomes.items()}
        assert sorted(status) == CLASS and status[crashed[0]] == "graded"
        rest = [s for s in CLASS if status[s] == "error"]
        # the other one in flight may have written its grade just before the crash
        assert len(rest) >= len(CLASS) - 2 and set(status.values()) == {"graded", "error"}
        lines = class_run_lines(run)
        for student in rest:
            line = next(ln for ln in lines if ln.strip().startswith(f"{student}:"))
            assert "grading error: " in line and "gradebook" in line, line
        monkeypatch.delenv(DB_ENV)
        cmd = ["autograde", ASSIGNMENT, "--course", str(course), "--db", db_url, "--jobs", "2"]
        again = cli(*cmd)
        assert again.returncode == 0, again.stdout + again.stderr
        assert f"{len(rest)} of {len(CLASS)} submissions to grade" in again.stderr
        assert outcomes(again) == dict.fromkeys(rest, "graded")
        assert submission_rows(db_url) == dict.fromkeys(CLASS, 1)
        totals = {s: cells["total"] for s, cells in scores_in(db_url, course).items()}
        assert totals == {s: expected[s] for s in CLASS}
    finally:
        _up(postgres)
        shutil.rmtree(course.parent, ignore_errors=True)
