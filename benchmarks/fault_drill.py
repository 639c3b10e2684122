"""A fault drill of class grading: faults injected into real runs on a class of 30, one line per
scenario (held or not, and what was seen), then a total. Prints figures, asserts nothing.

    python benchmarks/fault_drill.py [--students 30] [--only NAME ...] [--list]

Each scenario grades a fresh copy of the course (attention_basics: the instructor's solution,
a partly wrong notebook and the untouched stub in turn, and three notebooks that are not JSON)
into a new database of a throwaway PostgreSQL server (tests/pgserver.py), through the
`attention-course` command as an operator runs it, or, where the scenario needs a shortened
deadline or stall limit, through `autograde_class` in this process; then injects its fault and
runs the same command again where the scenario says so. A scenario holds when every student has
exactly one row in the gradebook with the total the graders give it (0 for a notebook that is
not JSON), no student was blamed for the infrastructure's time, and what the scenario says the
command must say was said. The scenarios:

- stall-waited-out: every PostgreSQL process stopped (SIGSTOP) for 40 s with submissions in
  flight, their deadline 20 s: nobody blamed, all graded in the run;
- stall-past-limit: the same for 40 s with a stall limit of 5 s and one retry: said as a stall,
  nobody blamed; the same command grades the rest;
- restore-mid-run: a `pg_dump` taken after 10 are done, restored after the run: the same
  command grades what the backup lacks, saying so;
- new-gradebook: the class graded into SQLite, then the command pointed at a new PostgreSQL
  database: it grades everyone into it;
- sigkill-N, sigint-N: the run killed (SIGKILL) or interrupted (SIGINT) as it keeps its first
  outcome, or N seconds after it starts: the same command leaves one row each;
- invalid-resubmission: three graded students hand in notebooks that are not JSON: 0 each, the
  earlier score said;
- full-disk: autograded/ a tmpfs of 16 KiB (as root; skipped otherwise), three students graded
  again: the cause (No space left on device) in every line, their rows marked in `scores`;
- dask-restart: the server stopped at once and started 8 s later while a local Dask cluster of
  two workers grades: the workers' retries told to the command, everyone graded.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_course.classgrade.gradebook import DB_ENV  # noqa: E402
from attention_course.classgrade.nbgrader_api import gradebook_scores  # noqa: E402
from attention_course.classgrade.run import STATE_DIR, autograde_class  # noqa: E402
from attention_course.settings import Retries  # noqa: E402
from tests.classgrade.test_class_grading import (  # noqa: E402
    ASSIGNMENT,
    CLI,
    _write,
    expected_total,
    fresh_course,
    write_class,
)
from tests.classgrade.test_gradebook_faults import progress_of as _progress  # noqa: E402
from tests.pgserver import PostgresServer  # noqa: E402

BROKEN = '{"cells": [ not json'
BROKEN_COUNT = 3


class Drill:
    """One scenario's course, gradebook and findings."""

    def __init__(self, server: PostgresServer, students: int, name: str):
        self.server, self.name = server, name
        self.course = fresh_course(f"attention-drill-{name}-")
        self.paths = write_class(self.course, students - BROKEN_COUNT)
        for i in range(BROKEN_COUNT):
            self.paths[f"b{i:02d}"] = _write(self.course, f"b{i:02d}", BROKEN)
        self.db = server.new_database()
        self.problems: list[str] = []
        self.seen: list[str] = []

    def close(self) -> None:
        shutil.rmtree(self.course.parent, ignore_errors=True)

    # -- the command, as an operator runs it

    def args(self, *more: str, db: str | None = "") -> list[str]:
        db = self.db if db == "" else db
        args = ["autograde", ASSIGNMENT, "--course", str(self.course), "--jobs", "2", *more]
        return args + (["--db", db] if db else [])

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*CLI, *args], capture_output=True, text=True, env=_env(), timeout=1800
        )

    def start(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(
            [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()
        )

    # -- what must hold

    def expect(self, condition: bool, problem: str) -> None:
        if not condition:
            self.problems.append(problem)

    def totals(self, db: str | None = "") -> dict[str, float]:
        db = self.db if db == "" else db
        before = os.environ.get(DB_ENV)
        if db:
            os.environ[DB_ENV] = db
        try:
            return {s: c["total"] for s, c in gradebook_scores(ASSIGNMENT, self.course).items()}
        finally:
            os.environ.pop(DB_ENV, None)
            if before is not None:
                os.environ[DB_ENV] = before

    def rows(self) -> dict[str, int]:
        """student -> its rows (submissions of the assignment) in the gradebook; none before
        nbgrader made its tables."""
        import psycopg

        with psycopg.connect(self.db.replace("postgresql+psycopg://", "postgresql://")) as conn:
            try:
                found = conn.execute(
                    "SELECT s.student_id, count(*) FROM submitted_assignment s JOIN assignment "
                    "a ON a.id = s.assignment_id WHERE a.name = %s GROUP BY s.student_id",
                    (ASSIGNMENT,),
                ).fetchall()
            except psycopg.errors.UndefinedTable:
                return {}
        return dict(found)

    def expected(self) -> dict[str, float]:
        return {
            s: 0.0 if p.read_text() == BROKEN else expected_total(p) for s, p in self.paths.items()
        }

    def every_row_right(self) -> None:
        rows = self.rows()
        extra = {s: n for s, n in rows.items() if n != 1}
        self.expect(set(rows) == set(self.paths), f"{len(set(self.paths) - set(rows))} no row")
        self.expect(not extra, f"rows not one each: {extra}")
        wrong = {s for s, t in self.totals().items() if self.expected().get(s) != t}
        self.expect(not wrong, f"wrong totals: {sorted(wrong)}")
        self.seen.append(f"{sum(n == 1 for n in rows.values())}/{len(self.paths)} rows right")

    def nobody_blamed(self, text: str) -> None:
        blamed = re.findall(r"(\S+): not graded \(grading took longer", text)
        blamed += re.findall(r"(\S+): not graded: grading took longer", text)
        said = [ln.strip() for s in set(blamed) for ln in text.splitlines() if f"{s}:" in ln]
        self.expect(not blamed, f"blamed for the infrastructure's time: {' | '.join(said)}")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", DB_ENV)}
    env["PATH"] = "/usr/bin:/bin"
    return env


def _missing(text: str) -> int:
    said = re.search(r"(\d+) submissions graded before have no grade in this gradebook", text)
    return int(said.group(1)) if said else 0


# ----------------------------------------------------------------------------- the scenarios


def stall(d: Drill, seconds: float, limit: float | None) -> None:
    """Every process of the server stopped for `seconds` once the first submission is graded
    (others in flight), under a 20 s deadline; `limit`: a shortened stall limit (one retry)."""
    stopped: list[int] = []
    over, frozen = threading.Event(), threading.Event()
    said: list[str] = []

    def freeze() -> None:
        stopped.extend(d.server.freeze())
        threading.Timer(seconds, lambda: (d.server.thaw(stopped), over.set())).start()

    def progress(kind: str, student, outcome) -> None:
        if kind == "done" and outcome.status == "graded" and not frozen.is_set():
            frozen.set()
            threading.Timer(0.5, freeze).start()
        if kind in ("done", "retry", "wait") and outcome is not None:
            said.append(f"  {student}: {outcome.status} ({outcome.reason})")

    os.environ[DB_ENV] = d.db
    options: dict = {"deadline": 20.0}
    if limit is not None:
        options.update(stall=limit, retries=Retries(attempts=1, first=0.5, longest=0.5))
    try:
        run = autograde_class(ASSIGNMENT, d.course, jobs=2, progress=progress, **options)
    finally:
        del os.environ[DB_ENV]
        over.wait(300)
    text = "\n".join(said)
    d.expect(bool(stopped), "the server was never stopped")
    d.nobody_blamed(text)
    errors = [s for s, o in run.outcomes.items() if o.status == "error"]
    if limit is None:
        d.expect(not errors, f"grading errors: {errors}")
        d.seen.append(f"{run.count('graded')} graded in the run, {len(errors)} errors")
    else:
        d.expect("a stall" in text, "no stall said")
        d.seen.append(f"{len(errors)} left to the next run, said as a stall")
        again = d.cli(*d.args())
        d.expect(again.returncode == 0, f"the next run exited {again.returncode}")
    d.every_row_right()


def restore_mid_run(d: Drill) -> None:
    dump = d.course.parent / "gradebook.dump"
    run = d.start(*d.args())
    assert run.stderr is not None
    said = []
    for line in run.stderr:
        said.append(line)
        if len(_progress("".join(said))) == 10:
            d.server.dump(d.db, dump)
            break
    out, err = run.communicate(timeout=1800)
    d.expect(run.returncode == 0 and dump.exists(), f"the run exited {run.returncode}")
    d.server.restore(d.db, dump)
    lacking = len(d.paths) - len(d.rows())
    again = d.cli(*d.args())
    d.expect(again.returncode == 0, f"the rerun exited {again.returncode}")
    d.expect(_missing(again.stderr) >= lacking > 0, "the missing grades were not said")
    d.seen.append(f"{lacking} rows lacking after the restore, {_missing(again.stderr)} said")
    d.every_row_right()


def new_gradebook(d: Drill) -> None:
    first = d.cli(*d.args(db=None))  # into the course's SQLite file
    d.expect(first.returncode == 0, f"grading into SQLite exited {first.returncode}")
    moved = d.cli(*d.args())
    d.expect(moved.returncode == 0, f"grading into PostgreSQL exited {moved.returncode}")
    d.expect(_missing(moved.stderr) == len(d.paths), "the new gradebook was not said")
    d.seen.append(f"{_missing(moved.stderr)} said missing in the new gradebook")
    d.every_row_right()


def stopped(d: Drill, sig: signal.Signals, point: float | None) -> None:
    """The run stopped with `sig` as it keeps its first outcome (`point` None) or `point`
    seconds after it starts; then the same command."""
    run = d.start(*d.args())
    began = time.monotonic()
    state = d.course / STATE_DIR / ASSIGNMENT
    while run.poll() is None and time.monotonic() < began + 300:
        if point is None and any(state.glob("*.json")):
            break
        if point is not None and time.monotonic() - began >= point:
            break
        time.sleep(0.01)
    d.expect(run.poll() is None, "the run ended before it was stopped")
    run.send_signal(sig)
    run.communicate(timeout=600)
    d.seen.append(f"stopped at {time.monotonic() - began:.1f} s with {len(d.rows())} rows")
    again = d.cli(*d.args())
    d.expect(again.returncode == 0, f"the rerun exited {again.returncode}")
    d.every_row_right()


def invalid_resubmission(d: Drill) -> None:
    first = d.cli(*d.args())
    d.expect(first.returncode == 0, f"the first run exited {first.returncode}")
    graded = [s for s, t in d.totals().items() if t > 0][:3]
    for student in graded:
        d.paths[student].write_text(BROKEN)
    again = d.cli(*d.args())
    d.expect(again.returncode == 0, f"the rerun exited {again.returncode}")
    said = [
        s for s in graded if re.search(rf"{s}: not graded: .*replaces an earlier", again.stdout)
    ]
    d.expect(said == graded, f"no earlier score said for {sorted(set(graded) - set(said))}")
    d.seen.append(f"{len(graded)} resubmitted invalid, {len(said)} said with their old score")
    d.every_row_right()


def full_disk(d: Drill) -> None:
    first = d.cli(*d.args())
    d.expect(first.returncode == 0, f"the first run exited {first.returncode}")
    autograded = d.course / "autograded"
    if os.geteuid() != 0:
        raise Skipped("not root: no tmpfs can be mounted for autograded/")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(autograded)], capture_output=True
    )
    if done.returncode:
        raise Skipped(f"no tmpfs can be mounted here: {done.stderr.decode().strip()}")
    try:
        picked = ["s00", "s01", "s02"]
        full = d.cli(*d.args("--force", *[a for s in picked for a in ("--student", s)]))
        d.expect(full.returncode == 1, f"the run on a full disk exited {full.returncode}")
        lines = [ln for ln in full.stdout.splitlines() if ": grading error: " in ln]
        told = [ln for ln in lines if "No space left on device" in ln]
        d.expect(len(told) == len(picked), f"{len(told)} of {len(picked)} errors said the cause")
        listed = d.cli("scores", ASSIGNMENT, "--course", str(d.course), "--db", d.db)
        marked = [s for s in picked if re.search(rf"^{s}(\s+\?)+\s*$", listed.stdout, re.M)]
        d.expect(marked == picked, f"rows not marked: {sorted(set(picked) - set(marked))}")
        d.seen.append(f"{len(told)} errors with the cause, {len(marked)} rows marked")
    finally:
        subprocess.run(["umount", str(autograded)], check=False)
    again = d.cli(*d.args())
    d.expect(again.returncode == 0, f"the rerun exited {again.returncode}")
    d.every_row_right()


def dask_restart(d: Drill) -> None:
    told: list[str] = []
    outage = threading.Event()

    def down() -> None:
        d.server.crash()
        time.sleep(8)
        d.server.restart()
        outage.set()

    def progress(kind: str, student, outcome) -> None:
        if kind == "done" and outcome.status == "graded" and not told:
            told.append("down")  # with others in flight on the workers
            threading.Timer(0.5, down).start()
        if kind == "retry":
            told.append(student)

    os.environ[DB_ENV] = d.db
    try:
        run = autograde_class(ASSIGNMENT, d.course, jobs=2, scheduler="local", progress=progress)
    finally:
        del os.environ[DB_ENV]
        outage.wait(120)
    retries = len(told) - 1
    d.expect(retries > 0, "no retry of a worker was told")
    d.expect(run.ok, f"{run.count('error')} grading errors")
    d.seen.append(f"{retries} retries told from the workers")
    d.every_row_right()


class Skipped(Exception):
    """The machine cannot inject this fault (the reason)."""


def scenarios() -> dict[str, Callable[[Drill], None]]:
    return {
        "stall-waited-out": lambda d: stall(d, 40, None),
        "stall-past-limit": lambda d: stall(d, 40, 5.0),
        "restore-mid-run": restore_mid_run,
        "new-gradebook": new_gradebook,
        "sigkill-first-record": lambda d: stopped(d, signal.SIGKILL, None),
        "sigkill-2s": lambda d: stopped(d, signal.SIGKILL, 2.0),
        "sigkill-5s": lambda d: stopped(d, signal.SIGKILL, 5.0),
        "sigint-first-record": lambda d: stopped(d, signal.SIGINT, None),
        "sigint-3s": lambda d: stopped(d, signal.SIGINT, 3.0),
        "invalid-resubmission": invalid_resubmission,
        "full-disk": full_disk,
        "dask-restart": dask_restart,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30, help="the class's size (30)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these scenarios alone")
    parser.add_argument("--list", action="store_true", help="list the scenarios")
    args = parser.parse_args()
    chosen = scenarios()
    if args.list:
        print("\n".join(chosen))
        return 0
    if args.only:
        unknown = sorted(set(args.only) - set(chosen))
        if unknown:
            parser.error(f"unknown scenario(s): {', '.join(unknown)} (see --list)")
        chosen = {name: chosen[name] for name in args.only}
    if args.students <= BROKEN_COUNT:
        parser.error(f"--students: more than {BROKEN_COUNT}")
    server = PostgresServer().start()
    held = ran = 0
    width = max(len(name) for name in chosen)
    try:
        for name, scenario in chosen.items():
            drill = Drill(server, args.students, name)
            began = time.monotonic()
            try:
                scenario(drill)
                verdict = "held" if not drill.problems else "FAILED"
            except Skipped as why:
                verdict, drill.problems = "skipped", [str(why)]
            except Exception as exc:  # noqa: BLE001 (a scenario that breaks is a line, not the end)
                verdict, drill.problems = "FAILED", [f"{type(exc).__name__}: {exc}"]
            finally:
                drill.close()
            ran += verdict != "skipped"
            held += verdict == "held"
            what = "; ".join(drill.seen + drill.problems)
            print(f"{name:<{width}}  {verdict:<7} {time.monotonic() - began:5.0f} s  {what}")
            sys.stdout.flush()
    finally:
        server.stop()
    print(f"total: {held} of {ran} scenarios held ({args.students} students each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
