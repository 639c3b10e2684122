"""The gradebook is the truth, whatever happens to it or to a run: faults injected into real
runs, with a PostgreSQL server of this module's own (it is stopped, dumped and restored) and the
`attention-course` command as an operator runs it.

- The server stopped (SIGSTOP on every process of it, as a storage or VM stall stops it) while a
  submission is graded, longer than the submission's (shortened) deadline: no student is blamed;
  the run waits it out, or, past the (shortened) stall limit, says it as a stall and the same
  command grades the rest.
- A gradebook restored from a `pg_dump` taken mid-run, and a new gradebook for a graded course
  folder (SQLite to PostgreSQL): the same command grades what the gradebook does not hold, and
  says so.
- A run killed (SIGKILL) or interrupted (SIGINT) at several points of its first seconds: after
  the same command again, every student has exactly one row with the right score.
- An invalid resubmission after a graded one: 0, with its reason, the earlier score said.
- A full disk for autograded/ (a small tmpfs, mounted as root): the cause in the command's
  output and the job's log; the rows marked as not reliable in `scores`, the report and
  `nbgrader export`.
- On a Dask cluster, a fault of the gradebook a worker retries is told to the command.

Expected totals come from the graders (`expected_total`), never typed. Each scenario runs once
in the suite; its further variants (the lock held instead of the server stopped, the SQLite
restore, PostgreSQL to a new PostgreSQL, other moments and signals, a link handed in) are marked
`long` and run by `scripts/test.sh --long`.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import nbformat
import psycopg
import pytest

from attention_course.classgrade.gradebook import DB_ENV
from attention_course.classgrade.run import STATE_DIR, autograde_class
from attention_course.cli.samples import sample_notebooks
from attention_course.settings import Retries
from tests.classgrade.test_class_grading import (
    ASSIGNMENT,
    CLI,
    SPIN,
    _write,
    expected_total,
    fresh_course,
    write_class,
    write_sleepy,
)
from tests.classgrade.test_cluster_grading import scores_in, submission_rows
from tests.classgrade.test_postgres_gradebook import nbgrader_export
from tests.pgserver import PostgresServer

BROKEN = '{"cells": [ not json'
BACKUP_WAIT = ".timeout 60000"  # the sqlite3 program waits for a run's write, as the docs say


@pytest.fixture(scope="module")
def server():
    """A PostgreSQL server of this module's own: its tests stop, dump and restore it."""
    pg = PostgresServer().start()
    yield pg
    pg.stop()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", DB_ENV)}
    env["PATH"] = "/usr/bin:/bin"  # as a user starts it: the environment's scripts not on PATH
    return env


def cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=_env(), timeout=timeout
    )


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()
    )


def autograde(course: Path, db_url: str | None, *more: str) -> list[str]:
    """The arguments of `attention-course autograde` of the course (into `db_url`, if given)."""
    args = ["autograde", ASSIGNMENT, "--course", str(course), "--jobs", "2", *more]
    return args + (["--db", db_url] if db_url else [])


def progress_of(text: str) -> dict[str, str]:
    """student -> what its progress line says (graded, not graded, error ...)."""
    found = {}
    for line in text.splitlines():
        said = re.match(r"\s+\d+/\d+ (\S+): (graded|not graded|error|busy|unchanged)", line)
        if said:
            found[said.group(1)] = said.group(2)
    return found


def totals_of(course: Path, paths: dict[str, Path]) -> dict[str, float]:
    """student -> the total the gradebook must hold (0 for a notebook that is not JSON)."""
    return {s: 0.0 if p.read_text() == BROKEN else expected_total(p) for s, p in paths.items()}


def gradebook_totals(db_url: str, course: Path) -> dict[str, float]:
    return {s: cells["total"] for s, cells in scores_in(db_url, course).items()}


def a_class(prefix: str, valid: int, broken: int = 0) -> tuple[Path, dict[str, Path]]:
    """A fresh course with `valid` submissions (instructor, partly wrong, stub in turn) and
    `broken` ones that are not JSON (b00, ...)."""
    course = fresh_course(prefix)
    paths = write_class(course, valid)
    for i in range(broken):
        paths[f"b{i:02d}"] = _write(course, f"b{i:02d}", BROKEN)
    return course, paths


def _remove(course: Path) -> None:
    shutil.rmtree(course.parent, ignore_errors=True)


# ----------------------------------------------------------------------------- a stalled server


class Stall:
    """A run's `progress` that stalls the gradebook 1.5 s after the first submission (s00) is
    done (by then the run has sent `sleepy`, whose grading takes some seconds) and lets it go
    on `seconds` later: every process of the server stopped (`how` "stopped": SIGSTOP, as a
    storage or VM stall stops it), or the table of nbgrader's grades locked by another session
    ("locked": as `VACUUM FULL` locks it)."""

    def __init__(self, server: PostgresServer, seconds: float, how: str = "stopped", db=""):
        self.server, self.seconds, self.how, self.db = server, seconds, how, db
        self.stopped: list[int] = []
        self.locker: psycopg.Connection | None = None
        self.over = threading.Event()

    def _stall(self) -> None:
        if self.how == "stopped":
            self.stopped.extend(self.server.freeze())
        else:
            self.locker = psycopg.connect(self.db.replace("postgresql+psycopg://", "postgresql://"))
            self.locker.execute("LOCK TABLE grade IN ACCESS EXCLUSIVE MODE")  # (a transaction)
            self.stopped.append(0)
        threading.Timer(self.seconds, self.end).start()

    def end(self) -> None:
        if self.locker is not None:
            self.locker.rollback()
            self.locker.close()
        self.server.thaw([pid for pid in self.stopped if pid])
        self.over.set()

    def __call__(self, kind: str, student, outcome) -> None:
        if kind == "done" and student == "s00" and not self.stopped:
            threading.Timer(1.5, self._stall).start()


@pytest.mark.parametrize("how", ["stopped", pytest.param("locked", marks=pytest.mark.long)])
def test_a_gradebook_stalled_past_the_deadline_is_waited_out_and_no_student_is_blamed(
    server, monkeypatch, how
):
    """Every process of PostgreSQL stopped, or nbgrader's table of grades locked, for 40 s
    while `sleepy` (about 5 s of grading) is graded under a deadline of 20 s: the time its
    grading waits on the gradebook is not its time, so it is graded in this very run with its
    score, as is everyone."""
    db_url = server.new_database()
    course = fresh_course("attention-stall-")
    paths = write_class(course, 1)  # s00, graded first
    paths["sleepy"] = write_sleepy(course)
    monkeypatch.setenv(DB_ENV, db_url)
    stall = Stall(server, 40, how, db_url)
    try:
        began = time.monotonic()
        run = autograde_class(ASSIGNMENT, course, jobs=1, progress=stall, deadline=20)
        assert stall.stopped, "the gradebook was not stalled"
        assert time.monotonic() - began > 40  # the stall was waited out, not cut short
        said = {s: (o.status, o.reason) for s, o in run.outcomes.items()}
        assert said == {"s00": ("graded", ""), "sleepy": ("graded", "")}, said
        assert run.ok
        assert submission_rows(db_url) == {"s00": 1, "sleepy": 1}
        assert gradebook_totals(db_url, course) == totals_of(course, paths)
    finally:
        stall.over.wait(60)
        _remove(course)


@pytest.mark.long  # a minute of a stopped server; the stall waited out (above) stays in CI
def test_a_stall_past_its_limit_is_the_infrastructures_and_the_same_command_grades_it(
    server, monkeypatch
):
    """The server stopped for 45 s, with a stall limit of 3 s and one retry: the wait of
    `sleepy`'s grading is broken and said as a stall, retried, then a fault of grading (never
    the student's: nothing recorded as its outcome, the run not ok); once the server is back,
    the same command (no --force) grades exactly it."""
    db_url = server.new_database()
    course = fresh_course("attention-stall-limit-")
    paths = write_class(course, 1)
    paths["sleepy"] = write_sleepy(course)
    monkeypatch.setenv(DB_ENV, db_url)
    stall = Stall(server, 45)
    told: list[tuple[str, str, str]] = []

    def tell(kind: str, student, outcome) -> None:
        stall(kind, student, outcome)
        if kind in ("done", "retry"):
            told.append((kind, student, outcome.reason))

    try:
        run = autograde_class(
            ASSIGNMENT,
            course,
            jobs=1,
            progress=tell,
            deadline=20,
            stall=3,
            retries=Retries(attempts=1, first=0.5, longest=0.5),
        )
        assert stall.stopped, "the server was not stopped"
        assert not run.ok
        assert run.outcomes["s00"].status == "graded"
        lost = run.outcomes["sleepy"]
        assert lost.status == "error" and "gradebook" in lost.reason, lost
        retried = [reason for kind, student, reason in told if kind == "retry"]
        # broken by the job at 3 s, or, on a busy machine, by the run a little later
        assert retried and re.search(r"did not answer for \d+ s \(a stall", retried[0]), told
        assert "longer than" not in str(told)  # never its time
        assert stall.over.wait(120)  # the server back
        monkeypatch.delenv(DB_ENV)
        again = cli(*autograde(course, db_url))
        assert again.returncode == 0, again.stdout + again.stderr
        assert "1 of 2 submissions to grade" in again.stderr, again.stderr
        assert progress_of(again.stderr) == {"sleepy": "graded"}
        assert submission_rows(db_url) == {"s00": 1, "sleepy": 1}
        assert gradebook_totals(db_url, course) == totals_of(course, paths)
    finally:
        stall.over.wait(120)
        _remove(course)


# ------------------------------------------------------------------ a restored or new gradebook


@pytest.mark.parametrize(
    "gradebook", ["postgresql", pytest.param("sqlite", marks=pytest.mark.long)]
)
def test_a_gradebook_restored_from_a_backup_taken_mid_run_is_completed_by_the_same_command(
    server, tmp_path, gradebook
):
    """A backup of the gradebook is taken while a class of 8 is graded (after 3 are done), as
    the instructors' page says (`pg_dump -Fc`; for SQLite, the sqlite3 program's `.backup`);
    once the run has ended, the gradebook is restored from it (dropped, created,
    `pg_restore`; the file copied back), as after losing the server or the disk: the same
    command grades every submission the restored gradebook does not hold, says so, and
    leaves every student one row with the right score."""
    course, paths = a_class("attention-restore-", 6, broken=2)
    db_url = server.new_database() if gradebook == "postgresql" else None
    url = db_url or f"sqlite:///{course / 'gradebook.db'}"
    backup = tmp_path / "gradebook.backup"

    def take_backup() -> None:
        if db_url:
            server.dump(db_url, backup)
        else:
            done = subprocess.run(
                [sqlite3_program(), str(course / "gradebook.db"), BACKUP_WAIT, f".backup {backup}"],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr

    def rows() -> dict[str, int]:
        return submission_rows(db_url) if db_url else _sqlite_rows(course)

    try:
        run = start(*autograde(course, db_url))
        assert run.stderr is not None
        said = []
        for line in run.stderr:
            said.append(line)
            if len(progress_of("".join(said))) == 3:
                take_backup()
                break
        out, err = run.communicate(timeout=900)
        assert run.returncode == 0, out + "".join(said) + err
        assert backup.exists(), "".join(said)
        if db_url:
            server.restore(db_url, backup)
        else:
            shutil.copy(backup, course / "gradebook.db")
        lacking = len(paths) - len(rows())
        assert lacking > 0  # the backup lacks what was graded after it
        again = cli(*autograde(course, db_url))
        assert again.returncode == 0, again.stdout + again.stderr
        missing = re.search(
            r"(\d+) submissions graded before have no grade in this gradebook", again.stderr
        )
        assert missing, again.stderr
        graded_again = progress_of(again.stderr)
        assert int(missing.group(1)) == len(graded_again) >= lacking
        assert rows() == dict.fromkeys(paths, 1)
        assert gradebook_totals(url, course) == totals_of(course, paths)
        third = cli(*autograde(course, db_url))
        assert f"0 of {len(paths)} submissions to grade" in third.stderr, third.stderr
    finally:
        _remove(course)


def sqlite3_program() -> str:
    """The sqlite3 program (scripts/setup.sh installs it); skipped, with the reason, without."""
    found = shutil.which("sqlite3")
    if found is None:
        pytest.skip("the sqlite3 program is not installed (apt-get install sqlite3)")
    return found


# two whole class runs; a restored gradebook (above), which lacks rows the same way, stays in CI
@pytest.mark.long
@pytest.mark.parametrize("first", ["sqlite", "postgresql"])
def test_a_new_gradebook_for_a_graded_course_folder_is_filled_by_the_same_command(server, first):
    """A class graded into one gradebook (the course's SQLite file, or a PostgreSQL database),
    then the same command pointed at a new, empty PostgreSQL gradebook (moving SQLite to
    PostgreSQL, or a database recreated after it was lost): it grades every submission into
    it, saying why, and `scores` lists every student with the right score."""
    course, paths = a_class("attention-new-gradebook-", 3, broken=1)
    old = None if first == "sqlite" else server.new_database()
    new = server.new_database()
    try:
        done = cli(*autograde(course, old))
        assert done.returncode == 0, done.stdout + done.stderr
        moved = cli(*autograde(course, new))
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert (
            f"{len(paths)} submissions graded before have no grade in this gradebook"
            in moved.stderr
        ), moved.stderr
        assert submission_rows(new) == dict.fromkeys(paths, 1)
        assert gradebook_totals(new, course) == totals_of(course, paths)
        listed = cli("scores", ASSIGNMENT, "--course", str(course), "--db", new)
        assert listed.returncode == 0, listed.stderr
        for student in paths:
            assert re.search(rf"^{student}\s", listed.stdout, re.M), listed.stdout
        again = cli(*autograde(course, new))
        assert f"0 of {len(paths)} submissions to grade" in again.stderr, again.stderr
    finally:
        _remove(course)


# ----------------------------------------------------------------- a run killed as it starts


def _first_record(course: Path) -> bool:
    """Whether the run has kept its first outcome in the course folder (its cache)."""
    return any((course / STATE_DIR / ASSIGNMENT).glob("*.json"))


@pytest.mark.parametrize(
    "sig, point, gradebook",
    [
        (signal.SIGKILL, "first record", "postgresql"),
        (signal.SIGINT, "first record", "sqlite"),
        # the same at other moments, other signals and gradebooks (scripts/test.sh --long)
        pytest.param(signal.SIGINT, 2.0, "postgresql", marks=pytest.mark.long),
        pytest.param(signal.SIGKILL, 2.5, "postgresql", marks=pytest.mark.long),
        pytest.param(signal.SIGKILL, 1.0, "postgresql", marks=pytest.mark.long),
        pytest.param(signal.SIGKILL, 4.0, "postgresql", marks=pytest.mark.long),
        pytest.param(signal.SIGINT, "first record", "postgresql", marks=pytest.mark.long),
    ],
    ids=lambda value: getattr(value, "name", str(value)),
)
def test_a_run_stopped_in_its_first_seconds_leaves_every_student_one_row_after_the_rerun(
    server, sig, point, gradebook
):
    """`autograde` of a class with submissions that cannot be graded is killed (SIGKILL) or
    interrupted (SIGINT, Ctrl-C) as it keeps its first outcome, or some seconds after it
    starts: the same command again exits 0 and every student has exactly one row in the
    gradebook, with the right score (0 for a notebook that is not JSON)."""
    db_url = server.new_database() if gradebook == "postgresql" else None
    course, paths = a_class("attention-stopped-", 5, broken=3)
    try:
        run = start(*autograde(course, db_url))
        began = time.monotonic()
        while run.poll() is None and time.monotonic() < began + 120:
            if point == "first record" and _first_record(course):
                break
            if point != "first record" and time.monotonic() - began >= float(point):
                break
            time.sleep(0.01)
        assert run.poll() is None, "the run ended before it was stopped"
        run.send_signal(sig)
        out, err = run.communicate(timeout=300)
        assert run.returncode != 0, out + err
        again = cli(*autograde(course, db_url))
        assert again.returncode == 0, again.stdout + again.stderr
        assert "Traceback" not in again.stderr
        url = db_url or f"sqlite:///{course / 'gradebook.db'}"
        if db_url:
            assert submission_rows(db_url) == dict.fromkeys(paths, 1)
        else:
            assert _sqlite_rows(course) == dict.fromkeys(paths, 1)
        assert gradebook_totals(url, course) == totals_of(course, paths)
        listed = cli("scores", ASSIGNMENT, "--course", str(course), *(["--db", url] * bool(db_url)))
        assert listed.returncode == 0, listed.stderr
        for student in paths:
            assert re.search(rf"^{student}\s", listed.stdout, re.M), listed.stdout
    finally:
        _remove(course)


def _sqlite_rows(course: Path) -> dict[str, int]:
    """student -> how many submissions of the assignment the course's SQLite gradebook holds."""
    import sqlite3

    with sqlite3.connect(course / "gradebook.db") as conn:
        rows = conn.execute(
            "SELECT s.student_id, count(*) FROM submitted_assignment s "
            "JOIN assignment a ON a.id = s.assignment_id WHERE a.name = ? "
            "GROUP BY s.student_id",
            (ASSIGNMENT,),
        ).fetchall()
    return dict(rows)


# ----------------------------------------------------------------- an invalid resubmission


def _graded_with_points(course: Path, paths: dict[str, Path], db_url: str) -> float:
    """The class graded by the command; s00's total, which it has earned (more than 0)."""
    first = cli(*autograde(course, db_url))
    assert first.returncode == 0, first.stdout + first.stderr
    full = expected_total(paths["s00"])
    assert gradebook_totals(db_url, course)["s00"] == full > 0
    return full


@pytest.mark.parametrize("kind", ["not JSON", pytest.param("a link", marks=pytest.mark.long)])
def test_an_invalid_resubmission_after_a_graded_one_is_0_with_its_reason(server, kind):
    """s00 is graded (full marks), then hands in a notebook that is not JSON, or a folder
    holding a link (refused before nbgrader reads it): its score is 0, with the reason, and
    the command says which earlier score it replaces; `scores` shows 0 and the reason; the
    other students keep theirs."""
    db_url = server.new_database()
    course, paths = a_class("attention-resubmit-", 3)
    try:
        full = _graded_with_points(course, paths, db_url)
        if kind == "not JSON":
            paths["s00"].write_text(BROKEN)
            words = "is not valid JSON"
        else:
            paths["s00"].unlink()
            paths["s00"].symlink_to("/etc/hostname")
            words = "link"
        again = cli(*autograde(course, db_url))
        assert again.returncode == 0, again.stdout + again.stderr
        assert "1 of 3 submissions to grade" in again.stderr, again.stderr
        line = next(ln for ln in again.stdout.splitlines() if ln.strip().startswith("s00:"))
        assert line.strip().startswith("s00: not graded: ") and words in line, line
        assert f"replaces an earlier version's {full:g} points" in line, line
        totals = gradebook_totals(db_url, course)
        assert totals["s00"] == 0
        assert {s: t for s, t in totals.items() if s != "s00"} == {
            s: expected_total(p) for s, p in paths.items() if s != "s00"
        }
        listed = cli("scores", ASSIGNMENT, "--course", str(course), "--db", db_url)
        row = next(ln for ln in listed.stdout.splitlines() if ln.startswith("s00 "))
        assert row.split()[-1] == "0", listed.stdout
        notes = listed.stdout.split("not graded (0 points):", 1)[-1]
        assert re.search(rf"^\s+s00: .*{words}", notes, re.M), listed.stdout
    finally:
        _remove(course)


@pytest.mark.long  # a variant of the invalid resubmission above (its cause: the time)
def test_a_resubmission_past_its_deadline_after_a_graded_one_is_0_with_its_reason(
    server, monkeypatch
):
    """What nbgrader grades and fails as the student's (here: a resubmission whose cells spin
    past the submission's time) takes back the earlier version's score as a refused one does:
    0, the reason, the earlier score said."""
    db_url = server.new_database()
    course, paths = a_class("attention-resubmit-slow-", 1)
    try:
        full = _graded_with_points(course, paths, db_url)
        slow = sample_notebooks(ASSIGNMENT, course)["demo-instructor"]
        slow.cells.insert(0, nbformat.v4.new_code_cell(SPIN))
        nbformat.write(slow, paths["s00"])
        monkeypatch.setenv(DB_ENV, db_url)
        run = autograde_class(ASSIGNMENT, course, jobs=1, deadline=1.0)
        said = run.outcomes["s00"]
        assert (said.status, said.reason) == ("not graded", "grading took longer than 1 s")
        assert gradebook_totals(db_url, course)["s00"] == 0  # not the earlier version's
        assert submission_rows(db_url) == {"s00": 1}
        assert said.replaced == full  # said
    finally:
        _remove(course)


# ----------------------------------------------------------------- a full disk


def _mount_small_tmpfs(folder: Path, size: str) -> None:
    """A tmpfs of `size` mounted on `folder` (as root), hiding what the folder held: a new,
    small disk, full once a notebook is written into it. Skipped, with the reason, where no
    file system can be mounted."""
    if os.geteuid() != 0:
        pytest.skip("a full disk is a small tmpfs mounted as root, and this run is not root")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        pytest.skip(f"no tmpfs can be mounted here ({done.stderr.strip() or 'mount failed'})")


def test_a_full_disk_for_autograded_says_its_cause_and_marks_the_rows(server, tmp_path):
    """A class is graded; then autograded/ is a full disk (a tmpfs of 16 KiB) and two of its
    students are graded again (--force): every error says the disk is full, in the command's
    output and in the grading jobs' log (with the traceback); the run exits 1; `scores` shows
    their rows as not reliable (no score, the cause below the table), never their earlier
    scores; the report leaves them out and names them; `nbgrader export` gives them no score
    and the status "not reliable"; the third student keeps a plain score everywhere."""
    db_url = server.new_database()
    course, paths = a_class("attention-full-disk-", 3)
    autograded = course / "autograded"
    mounted = False
    try:
        first = cli(*autograde(course, db_url))
        assert first.returncode == 0, first.stdout + first.stderr
        _mount_small_tmpfs(autograded, "16k")
        mounted = True
        full = cli(*autograde(course, db_url, "--force", "--student", "s00", "--student", "s01"))
        assert full.returncode == 1, full.stdout + full.stderr
        assert "Traceback" not in full.stderr
        for student in ("s00", "s01"):
            line = next(ln for ln in full.stdout.splitlines() if f"{student}: grading" in ln)
            assert "grading error: the disk failed" in line, full.stdout
            assert "No space left on device" in line, full.stdout
        assert "There was an error processing" not in full.stdout
        log = (course / STATE_DIR / ASSIGNMENT / "jobs.log").read_text()
        assert "No space left on device" in log and "Traceback (most recent call last)" in log

        listed = cli("scores", ASSIGNMENT, "--course", str(course), "--db", db_url)
        assert listed.returncode == 0, listed.stderr
        rows = {ln.split()[0]: ln.split()[1:] for ln in listed.stdout.splitlines()[2:5]}
        assert set(rows["s00"]) == set(rows["s01"]) == {"?"}, listed.stdout
        assert rows["s02"][-1] == f"{expected_total(paths['s02']):g}", listed.stdout
        for student in ("s00", "s01"):
            assert re.search(
                rf"^\s+{student}: grading failed: the disk failed: .*No space left on device",
                listed.stdout,
                re.M,
            ), listed.stdout

        out = tmp_path / "report"
        report = cli("report", ASSIGNMENT, "--course", str(course), "--db", db_url, "--out", out)
        assert report.returncode == 0, report.stdout + report.stderr
        assert "Not reliable" in report.stdout and "No space left on device" in report.stdout
        with open(out / "scores.csv") as f:
            total = next(row for row in csv.DictReader(f) if row["function"] == "total")
        assert int(total["students"]) == 1  # s02 alone

        rows = nbgrader_export(course, db_url, tmp_path / "grades.csv")
        got = {r["student_id"]: r for r in rows if r["assignment"] == ASSIGNMENT}
        for student in ("s00", "s01"):
            assert (got[student]["score"], got[student]["status"]) == ("", "not reliable")
            assert "No space left on device" in got[student]["reason"]
        assert float(got["s02"]["score"]) == expected_total(paths["s02"])
        assert got["s02"]["status"] == "graded"
    finally:
        if mounted:
            subprocess.run(["umount", str(autograded)], check=False)
        _remove(course)


# ----------------------------------------------------------------- on a Dask cluster


@pytest.mark.long  # Dask's own retries (a server restarted under its workers: fault_drill.py too)
def test_a_fault_a_dask_worker_tries_again_is_told_to_the_command(server, dask_client, monkeypatch):
    """The gradebook's server is down (stopped at once, started again 8 s later) while a Dask
    worker grades `sleepy`: the worker tries it again, and each try is told to the run that
    sent it, as a local run tells its own ("trying again"); then it is graded with its score."""
    db_url = server.new_database()
    course = fresh_course("attention-dask-retry-")
    paths = write_class(course, 1)
    paths["sleepy"] = write_sleepy(course)
    monkeypatch.setenv(DB_ENV, db_url)
    told: list[tuple[str, str, str]] = []
    outage, started = threading.Event(), threading.Event()

    def down_for_a_while() -> None:
        server.crash()
        time.sleep(8)
        server.restart()
        outage.set()

    def progress(kind: str, student, outcome) -> None:
        if outcome is not None:
            told.append((kind, student, outcome.reason))
        if kind == "done" and not started.is_set():  # the other one still in flight
            started.set()
            threading.Timer(0.5, down_for_a_while).start()

    try:
        run = autograde_class(ASSIGNMENT, course, scheduler=dask_client, progress=progress)
        assert outage.wait(60), "the server was not stopped"
        retried = [(student, reason) for kind, student, reason in told if kind == "retry"]
        assert retried, told
        assert all("trying again in" in reason for _, reason in retried), retried
        assert {s: o.status for s, o in run.outcomes.items()} == {
            "s00": "graded",
            "sleepy": "graded",
        }, run.outcomes
        assert submission_rows(db_url) == {"s00": 1, "sleepy": 1}
        assert gradebook_totals(db_url, course) == totals_of(course, paths)
    finally:
        outage.wait(60)
        _remove(course)
