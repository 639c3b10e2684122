"""Grading a real class as an instructor does: a fresh course, one command, resumable, clear.

The class is graded through the `attention-course` command itself, started as a user would
start it from a fresh clone: `.venv/bin/attention-course`, without the environment on PATH.
Expected scores are computed from the graders (`grade_file`) and the points of the released
notebook's test cells, never typed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import copy_course, gradebook_exists, gradebook_scores
from attention_course.classgrade.run import STATE_DIR, autograde_class
from attention_course.cli.samples import sample_notebooks
from attention_course.grading.graders import grade_file
from tests.course import COURSE_ROOT, grade_cell_id

ASSIGNMENT = "attention_basics"
CLI = [str(Path(sys.executable).parent / "attention-course")]
KINDS = ("demo-instructor", "demo-partial", "demo-stub")


def run_cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = "/usr/bin:/bin"  # the environment's scripts (alembic) are not on PATH
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, **kwargs)


def points() -> dict[str, float]:
    nb = nbformat.read(COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    found = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and meta.get("grade_id", "").endswith("_tests"):
            found[meta["grade_id"]] = float(meta["points"])
    return found


_TOTALS: dict[bytes, float] = {}  # notebook content -> expected_total (graded once per content)


def expected_total(notebook: Path) -> float:
    """The total the gradebook must hold: each test cell's points times the share of its
    grader's test points the notebook earns."""
    content = notebook.read_bytes()
    if content not in _TOTALS:
        _TOTALS[content] = _expected_total(notebook)
    return _TOTALS[content]


def _expected_total(notebook: Path) -> float:
    report = grade_file(notebook, ASSIGNMENT)
    cells = points()
    total = 0.0
    for function, score in report.functions.items():
        total += cells[grade_cell_id(function)] * score.score / score.max_score
    return round(total, 6)


def _write(course: Path, student: str, nb, name: str = f"{ASSIGNMENT}.ipynb") -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if isinstance(nb, str):
        path.write_text(nb)
    else:
        nbformat.write(nb, path)
    return path


def write_sleepy(course: Path) -> Path:
    """`sleepy`: the instructor's solutions after a cell that sleeps 3 s (its grading is slow
    enough to be stopped or killed in the middle)."""
    notebook = sample_notebooks(ASSIGNMENT, course)["demo-instructor"]
    notebook.cells.insert(0, nbformat.v4.new_code_cell("import time\ntime.sleep(3)"))
    return _write(course, "sleepy", notebook)


def _stripped(nb, keep_functions: bool = True):
    """The notebook as a tool that drops nbgrader's metadata and cell ids saves it."""
    nb = nbformat.reads(nbformat.writes(nb), as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)
        cell.pop("id", None)
    nb.metadata.pop("attention_course", None)
    nb.nbformat_minor = 4  # a format without cell ids, as older tools write
    if not keep_functions:
        nb.cells = [c for c in nb.cells if "def " not in c.source]
    return nb


def fresh_course(prefix: str) -> Path:
    """A course as a fresh clone has it: source/, release/, nbgrader_config.py, no gradebook."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    return copy_course(base / "course", COURSE_ROOT)


def write_class(course: Path, count: int, prefix: str = "s") -> dict[str, Path]:
    samples = sample_notebooks(ASSIGNMENT, course)
    return {
        f"{prefix}{i:02d}": _write(course, f"{prefix}{i:02d}", samples[KINDS[i % 3]])
        for i in range(count)
    }


REASONS = {
    # student -> the words its "not graded" line must hold
    "renamed": "no attention_basics.ipynb in submitted/renamed/attention_basics/ (found: "
    "homework.ipynb)",
    "broken": "attention_basics.ipynb is not valid JSON",
    "format3": "is in notebook format 3, which nbgrader cannot grade",
    "emptied": "its nbgrader metadata was lost and none of its cells could be matched",
}


class CommandLines:
    """Every process's command line on this machine while it is entered (/proc, every 20 ms):
    what any local account can read of a grading run with `ps`."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> CommandLines:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    try:
                        with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                            self.seen.add(f.read())
                    except OSError:  # it ended meanwhile
                        pass


@pytest.fixture(scope="module")
def class_run():
    """The class graded by one command, and every command line seen on the machine meanwhile."""
    course = fresh_course("attention-class-")
    assert not gradebook_exists(course)
    paths = write_class(course, 3)  # s00, s01, s02: one of each kind
    samples = sample_notebooks(ASSIGNMENT, course)
    paths["stripped"] = _write(course, "stripped", _stripped(samples["demo-instructor"]))
    _write(course, "renamed", samples["demo-instructor"], "homework.ipynb")
    _write(course, "broken", '{"cells": [ not json')
    _write(course, "format3", json.dumps({"nbformat": 3, "nbformat_minor": 0, "cells": []}))
    _write(course, "emptied", _stripped(samples["demo-instructor"], keep_functions=False))
    with CommandLines() as lines:
        proc = run_cli("autograde", ASSIGNMENT, "--course", str(course), timeout=1200)
    yield course, paths, proc, lines.seen
    shutil.rmtree(course.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def graded_course(class_run):
    return class_run[:3]


def test_no_seed_is_on_any_command_line_while_the_class_is_graded(class_run):
    """A student's seed (which decides the graders' inputs) goes to the processes that grade by
    a pipe or the environment, which only the grading account reads, never by a command line,
    which every account on a shared hub reads."""
    course, paths, proc, lines = class_run
    assert proc.returncode == 0, proc.stderr
    records = (course / ".grading" / "seeds" / ASSIGNMENT).glob("*.json")
    seeds = {seed for path in records for seed in json.loads(path.read_text()).values()}
    assert len(seeds) >= len(paths)  # every graded student's seed, recorded for the instructor
    assert any(b"autograde" in line for line in lines)  # the watch saw the run's processes
    leaked = [line for line in lines for seed in seeds if seed.encode() in line]
    assert not leaked, leaked[:3]


def test_a_fresh_course_grades_its_class_in_one_command(graded_course):
    course, paths, proc = graded_course
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    scores = gradebook_scores(ASSIGNMENT, course)
    for student, path in paths.items():
        assert scores[student]["total"] == expected_total(path), student
    assert (course / "feedback" / "s00" / ASSIGNMENT / f"{ASSIGNMENT}.html").exists()


def test_a_notebook_that_lost_its_metadata_gets_the_score_of_its_functions(graded_course):
    course, paths, _ = graded_course
    instructor = expected_total(paths["s00"])
    assert instructor == sum(points().values())
    assert gradebook_scores(ASSIGNMENT, course)["stripped"]["total"] == instructor
    autograded = course / "autograded" / "stripped" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert "had lost its nbgrader metadata" in autograded.read_text()


@pytest.mark.parametrize("student", sorted(REASONS))
def test_each_ungraded_submission_says_why(graded_course, student):
    _, _, proc = graded_course
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip().startswith(f"{student}:")]
    assert lines, proc.stdout
    assert f"{student}: not graded: " in lines[0]
    assert REASONS[student] in lines[0], lines[0]


def test_progress_is_a_line_per_submission_when_not_on_a_terminal(graded_course):
    _, _, proc = graded_course
    assert "8 of 8 submissions to grade" in proc.stderr
    assert " s00: graded (35 points)" in proc.stderr
    assert "broken: not graded (" in proc.stderr


def test_a_second_run_with_nothing_new_grades_nothing(graded_course):
    course, _, _ = graded_course
    proc = run_cli("autograde", ASSIGNMENT, "--course", str(course), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "0 of 8 submissions to grade" in proc.stderr
    assert "8 unchanged since last graded" in proc.stdout
    for student, words in REASONS.items():  # the reasons are still said
        assert words in proc.stdout, student


def test_a_changed_submission_is_graded_again(graded_course):
    course, paths, _ = graded_course
    stub = sample_notebooks(ASSIGNMENT, course)["demo-stub"]
    nbformat.write(stub, paths["s00"])  # s00 hands in the stub instead of the solution
    run = autograde_class(ASSIGNMENT, course, jobs=1)
    assert run.outcomes["s00"].status == "graded"
    assert run.count("graded") == 1
    assert gradebook_scores(ASSIGNMENT, course)["s00"]["total"] == 0


def test_a_submission_past_its_deadline_is_not_graded_and_says_so(graded_course):
    """A submission whose cells spin for 4.5 CPU-seconds, with a second to be graded in."""
    course, _, _ = graded_course
    notebook = sample_notebooks(ASSIGNMENT, course)["demo-instructor"]
    notebook.cells.insert(0, nbformat.v4.new_code_cell(SPIN))
    _write(course, "slow", notebook)
    try:
        run = autograde_class(ASSIGNMENT, course, students=["slow"], force=True, deadline=1.0)
    finally:
        shutil.rmtree(course / "submitted" / "slow")
    assert run.outcomes["slow"].status == "not graded"
    assert run.outcomes["slow"].reason == "grading took longer than 1 s"


def grading_jobs_of(course: Path) -> list[int]:
    """Process ids of the grading jobs working for `course`: forked from `autograde` (named
    "grading job", its command line) or started anew (`-m attention_course.classgrade.job`)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmd = Path(f"/proc/{entry.name}/cmdline").read_bytes().split(b"\0")
                name = Path(f"/proc/{entry.name}/comm").read_text().strip()
            except OSError:
                continue
            job = name == "grading job" or b"attention_course.classgrade.job" in cmd
            if job and str(course).encode() in cmd:
                found.append(int(entry.name))
    return found


def autograde_in_background(course: Path, env: dict) -> subprocess.Popen:
    """`attention-course autograde` of the course with two jobs, its output thrown away."""
    return subprocess.Popen(
        [*CLI, "autograde", ASSIGNMENT, "--course", str(course), "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def test_kill_9_mid_class_then_rerun_grades_each_submission_once(graded_course):
    reference, _, _ = graded_course
    course = fresh_course("attention-kill-")
    size = 6
    try:
        paths = write_class(course, size)
        state = course / STATE_DIR / ASSIGNMENT
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        env["PATH"] = "/usr/bin:/bin"
        first = autograde_in_background(course, env)
        deadline = time.monotonic() + 600
        while len(list(state.glob("*.json"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(grading_jobs_of(course)) == 2  # the run's two jobs, found as they work
        first.send_signal(signal.SIGKILL)
        first.wait()
        done = {p.stem for p in state.glob("*.json")}
        assert 2 <= len(done) < size
        time.sleep(2)
        assert grading_jobs_of(course) == []  # the jobs died with their parent ...
        db = course / "gradebook.db"
        before = db.stat().st_mtime_ns
        time.sleep(3)
        assert db.stat().st_mtime_ns == before  # ... and nothing goes on writing grades
        second = run_cli("autograde", ASSIGNMENT, "--course", str(course), timeout=1200)
        assert second.returncode == 0, second.stderr
        regraded = {
            ln.split(":")[0].split()[-1] for ln in second.stderr.splitlines() if ": graded (" in ln
        }
        assert regraded == set(paths) - done
        assert f"{size - len(done)} of {size} submissions to grade" in second.stderr
        scores = gradebook_scores(ASSIGNMENT, course)
        uninterrupted = gradebook_scores(ASSIGNMENT, reference)
        assert sorted(scores) == sorted(paths)
        for student, path in paths.items():
            assert scores[student]["total"] == expected_total(path), student
            twin = f"s{int(student[1:]) % 3:02d}"  # the reference class's student of that kind
            if twin != "s00":  # s00 is changed by another test of the reference class
                assert scores[student] == uninterrupted[twin], student
        third = run_cli("autograde", ASSIGNMENT, "--course", str(course), timeout=600)
        assert f"0 of {size} submissions to grade" in third.stderr
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)


SPIN = "import time\nend = time.process_time() + 4.5\nwhile time.process_time() < end:\n    pass"


def pipes_of(pid: int) -> dict[int, str]:
    """A process's open pipes: fd -> the pipe ("pipe:[inode]")."""
    links = {int(fd.name): os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()}
    return {fd: link for fd, link in links.items() if link.startswith("pipe:")}


def test_busy_jobs_die_with_the_killed_command_and_hold_nothing_of_each_other():
    """Two grading jobs, each busy with a submission (its cells spin for about 18 CPU-seconds):
    each reads its own requests on stdin and holds no pipe of the other's (a job that held the
    other's would keep it from seeing its requests end), and neither finishes its submission
    once `autograde` is killed: the kernel kills the jobs with it (their request pipes closing
    would only end them after this submission, its grade written)."""
    course = fresh_course("attention-kill-busy-")
    command = None
    try:
        notebook = sample_notebooks(ASSIGNMENT, course)["demo-instructor"]
        for _ in range(4):
            notebook.cells.insert(0, nbformat.v4.new_code_cell(SPIN))
        for student in ("busy1", "busy2"):
            _write(course, student, notebook)
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        command = autograde_in_background(course, env)
        deadline = time.monotonic() + 120
        while len(grading_jobs_of(course)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        jobs = grading_jobs_of(course)
        for job in jobs:  # forks of the command (a job started anew is named "python")
            assert Path(f"/proc/{job}/comm").read_text() == "grading job\n"
        time.sleep(5)  # into the spinning cells
        assert command.poll() is None and grading_jobs_of(course) == jobs  # still grading
        first, second = (pipes_of(job) for job in jobs)
        assert 0 in first and 0 in second  # requests come on a pipe of the job's own ...
        assert not set(first.values()) & set(second.values())  # ... shared with no other job
        log = str(course / STATE_DIR / ASSIGNMENT / "jobs.log")
        for job in jobs:  # the log is its stdout and stderr, and no other file of the command's
            fds = {int(fd.name): os.readlink(fd) for fd in Path(f"/proc/{job}/fd").iterdir()}
            assert sorted(fd for fd, path in fds.items() if path == log) == [1, 2]
        command.send_signal(signal.SIGKILL)
        command.wait()
        gone = time.monotonic() + 3
        while grading_jobs_of(course) and time.monotonic() < gone:
            time.sleep(0.05)
        assert grading_jobs_of(course) == []
        assert not list((course / STATE_DIR / ASSIGNMENT).glob("busy*.json"))
    finally:
        if command is not None and command.poll() is None:  # a check above failed
            command.kill()
            command.wait()
        shutil.rmtree(course.parent, ignore_errors=True)


FORKS = """
import sys
from pathlib import Path
from attention_course.classgrade.jobs import GradingJob
course, nowhere, log = sys.argv[1:]
with open(log, "a") as log:
    job = GradingJob.fork(Path(course), False, log)
    broken = GradingJob.fork(Path(nowhere), False, log)
while not job.read():  # its "ready"
    pass
job.requests.close()
print(job.proc.wait(), broken.read(), broken.proc.wait())
"""


def test_a_forked_job_ends_with_its_requests_and_a_crashed_one_says_why(tmp_path):
    """A job forked from a command ends, status 0, once its requests end; one that cannot serve
    (a course folder that is not there) ends at once, status 70 (EX_SOFTWARE), without a
    reply, its traceback in the jobs' log; neither goes on in the command's own code."""
    course = copy_course(tmp_path / "course", COURSE_ROOT)
    log = tmp_path / "jobs.log"
    forks = subprocess.run(
        [sys.executable, "-c", FORKS, str(course), str(tmp_path / "nowhere"), str(log)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert forks.returncode == 0, forks.stderr
    assert forks.stdout == "0 None 70\n"
    assert "Traceback (most recent call last)" in log.read_text()
    assert str(tmp_path / "nowhere") in log.read_text()


def test_unknown_student_and_empty_class_are_one_line_errors(tmp_path):
    course = copy_course(tmp_path / "course", COURSE_ROOT)
    proc = run_cli("autograde", ASSIGNMENT, "--course", str(course))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "no submissions in" in proc.stderr
    proc = run_cli("autograde", ASSIGNMENT, "--course", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "not a course folder" in proc.stderr


def test_scores_and_check_take_the_graded_quiz(graded_class):
    root, _ = graded_class
    proc = run_cli("scores", "attention_quiz", "--course", str(root))
    assert proc.returncode == 0, proc.stderr
    assert "demo-instructor" in proc.stdout
    quiz = root / "submitted" / "demo-instructor" / "attention_quiz" / "attention_quiz.ipynb"
    proc = run_cli("check", str(quiz), "--student", "demo-instructor", "--json")
    assert proc.returncode == 0, proc.stderr
    stored = gradebook_scores("attention_quiz", root)["demo-instructor"]
    checked = json.loads(proc.stdout)
    assert checked["score"] == pytest.approx(stored["total"])
    proc = run_cli("check", str(quiz))
    assert proc.returncode == 2 and "--student" in proc.stderr


def test_plain_nbgrader_autograde_with_the_course_config_gives_the_same_scores(graded_course):
    """`nbgrader autograde` itself (one submission after another, the course's
    nbgrader_config.py) stores what `attention-course autograde` stores."""
    reference, paths, _ = graded_course
    course = fresh_course("attention-plain-")
    try:
        samples = sample_notebooks(ASSIGNMENT, course)
        students = {"s01": samples["demo-partial"], "s02": samples["demo-stub"]}
        students["s03"] = samples["demo-instructor"]
        for student, nb in students.items():
            _write(course, student, nb)
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        env["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"
        nbgrader = str(Path(sys.executable).parent / "nbgrader")
        steps = (
            ["generate_assignment", ASSIGNMENT, "--force"],
            ["autograde", ASSIGNMENT, "--create"],
        )
        for argv in steps:
            proc = subprocess.run(
                [nbgrader, *argv], cwd=course, env=env, capture_output=True, text=True
            )
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        plain = gradebook_scores(ASSIGNMENT, course)
        ours = gradebook_scores(ASSIGNMENT, reference)
        for student in ("s01", "s02"):
            assert plain[student] == ours[student], student
        assert plain["s03"]["total"] == sum(points().values())  # the solution: full marks
    finally:
        shutil.rmtree(course.parent, ignore_errors=True)


def test_an_instructors_manual_score_is_what_scores_report_and_a_rerun_keeps(graded_course):
    """A score the instructor set by hand (formgrader's manual grading) overrides the
    autograded one in what the course reports, and a rerun with nothing new keeps it."""
    from nbgrader.api import Gradebook

    course, paths, _ = graded_course
    student, cell = "s00", "softmax_tests"  # s00 is an instructor solution: full marks
    before = gradebook_scores(ASSIGNMENT, course)[student]
    url = f"sqlite:///{course / 'gradebook.db'}"

    def set_manual(value: float | None) -> None:
        with Gradebook(url) as gb:
            grade = gb.find_grade(cell, ASSIGNMENT, ASSIGNMENT, student)
            grade.manual_score = value
            gb.db.commit()

    set_manual(before[cell] - 3)
    try:
        after = gradebook_scores(ASSIGNMENT, course)[student]
        assert after[cell] == before[cell] - 3
        assert after["total"] == before["total"] - 3
        proc = run_cli("scores", ASSIGNMENT, "--course", str(course))
        assert proc.returncode == 0, proc.stderr
        (line,) = [ln for ln in proc.stdout.splitlines() if ln.split()[:1] == [student]]
        assert f"{before['total'] - 3:g}" in line.split(), line
        rerun = run_cli("autograde", ASSIGNMENT, "--course", str(course), timeout=600)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        assert gradebook_scores(ASSIGNMENT, course)[student] == after
    finally:
        set_manual(None)


def test_a_changed_grader_regrades_its_assignment_and_only_it(graded_course):
    """What regrades (CONTRIBUTING.md), end to end: an edit of another assignment's grader
    regrades nothing of this one; an edit of one of its own graders regrades all of it."""
    course, _, _ = graded_course
    note = "\n# a comment the instructor added\n"
    other = course / "grader_tests" / "test_split_heads.py"  # masks_and_heads' grader
    other.write_text(other.read_text() + note)
    proc = run_cli("autograde", ASSIGNMENT, "--course", str(course), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "0 of 8 submissions to grade" in proc.stderr
    own = course / "grader_tests" / "test_causal_mask.py"
    own.write_text(own.read_text() + note)
    proc = run_cli("autograde", ASSIGNMENT, "--course", str(course), timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "8 of 8 submissions to grade" in proc.stderr
    proc = run_cli("autograde", ASSIGNMENT, "--course", str(course), timeout=600)
    assert "0 of 8 submissions to grade" in proc.stderr  # and graded once: nothing new again
