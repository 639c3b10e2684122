"""Submissions per minute graded through Dask into PostgreSQL: prints figures, asserts nothing.

    python benchmarks/dask_grading.py [--students N] [--workers 1 2] [--feedback] [--no-local]

A class of N submissions of attention_basics (a third the instructor's solution, a third partly
wrong, a third untouched stubs) is graded with `autograde_class(..., scheduler=client)` on a
Dask LocalCluster of W worker processes (one thread each), into a throwaway PostgreSQL server
(tests/pgserver.py), once per worker count, each in a fresh course copy and database. For each
run it prints the cluster's start-up, the wall time of grading (each worker's first task starts
its grading job), submissions per minute, and the CPU-seconds per submission of everything
(this process, the workers, their grading jobs and sandboxes, PostgreSQL: benchmarks/cputime.py)
and of PostgreSQL alone, and the connections to the gradebook per submission (PostgreSQL's
count of sessions, the workers restarted first so that theirs end). For comparison, the same
class is then graded by as many local jobs into the same kind of gradebook (--no-local: not).
The load average is printed with each run: other work on the machine shows there.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cputime import CpuClock  # noqa: E402
from grading_speed import write_class  # noqa: E402

from attention_course.classgrade.gradebook import DB_ENV  # noqa: E402
from attention_course.classgrade.nbgrader_api import copy_course  # noqa: E402
from attention_course.classgrade.run import autograde_class  # noqa: E402
from tests.pgserver import PostgresServer  # noqa: E402

COURSE_ROOT = Path(__file__).resolve().parent.parent  # this repository's course

ASSIGNMENT = "attention_basics"


def postgres_cpu(server: PostgresServer) -> float:
    """CPU-seconds of the PostgreSQL server and its backends (those that ended included)."""
    pid = int((server.data / "postmaster.pid").read_text().split()[0])
    total = 0.0
    try:
        proc = psutil.Process(pid)
        for p in [proc, *proc.children(recursive=True)]:
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    except psutil.Error:
        pass
    return total


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def grade(label, root, students, server, cpu, **how) -> None:
    db_url = os.environ[DB_ENV] = server.new_database()
    before, db_before = cpu.seconds(), postgres_cpu(server)
    start = time.perf_counter()
    run = autograde_class(ASSIGNMENT, root, **how)
    wall = time.perf_counter() - start
    used, db_used = cpu.seconds() - before, postgres_cpu(server) - db_before
    failed = [s for s, o in run.outcomes.items() if o.status != "graded"]
    if how.get("scheduler") is not None:
        how["scheduler"].restart()  # the workers' own connections end, and are counted
    connections = server.sessions(db_url)
    print(
        f"{label}: {wall:6.1f} s, {60 * len(students) / wall:5.1f} submissions per minute, "
        f"{used / len(students):4.2f} CPU-s per submission ({db_used / len(students):4.2f} "
        f"PostgreSQL's), {connections / len(students):4.2f} gradebook connections per "
        f"submission, {load()}" + (f", FAILED: {failed}" if failed else ""),
        flush=True,
    )


def main() -> None:
    from distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=24, help="submissions in the class")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts")
    parser.add_argument("--feedback", action="store_true", help="also write each feedback")
    parser.add_argument(
        "--no-local", dest="local", action="store_false", help="no local jobs for comparison"
    )
    args = parser.parse_args()
    cpu = CpuClock()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {load()}")
    print(f"class: {args.students} submissions of {ASSIGNMENT} (correct, partly wrong, stubs)")
    print(f"feedback: {'written' if args.feedback else 'not written'}; gradebook: PostgreSQL")
    print(f"CPU time from {cpu.source}")
    server = PostgresServer().start()
    try:
        with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
            for workers in args.workers:
                root = copy_course(Path(tmp) / f"dask-{workers}", COURSE_ROOT)
                students = write_class(root, ASSIGNMENT, args.students)
                start = time.perf_counter()
                cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                client = Client(cluster)
                print(f"Dask LocalCluster of {workers} up in {time.perf_counter() - start:.1f} s")
                label = f"Dask, {workers} worker{'s' if workers > 1 else ''}"
                grade(label, root, students, server, cpu, scheduler=client, feedback=args.feedback)
                client.close()
                cluster.close()
            for jobs in args.workers if args.local else []:
                root = copy_course(Path(tmp) / f"local-{jobs}", COURSE_ROOT)
                students = write_class(root, ASSIGNMENT, args.students)
                label = f"local, {jobs} job{'s' if jobs > 1 else ''} "
                grade(label, root, students, server, cpu, jobs=jobs, feedback=args.feedback)
    finally:
        server.stop()
        cpu.close()


if __name__ == "__main__":
    main()
