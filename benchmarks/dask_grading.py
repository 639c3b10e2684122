"""Submissions per minute graded through Dask into PostgreSQL: prints figures, asserts nothing.

    python benchmarks/dask_grading.py [--students N] [--workers 1 2] [--feedback] [--no-local]

A class of N submissions of attention_basics (a third the instructor's solution, a third partly
wrong, a third untouched stubs) is graded with `autograde_class(..., scheduler=client)` on the
Dask LocalCluster `--scheduler local` makes (cluster.connect: W worker processes of one thread
each, settings.DASK_CONFIG), into a throwaway PostgreSQL server (tests/pgserver.py), once per
worker count, each in a fresh course copy and database; then, for comparison, by as many local
jobs into the same kind of gradebook (--no-local: not). For each cluster it prints what its
stack uses idle (a share of a core); for each run the wall time of grading (each worker's
first task starts its grading job), submissions per minute, the connections to the gradebook
per submission (PostgreSQL's count of sessions, the cluster closed first so that its workers'
end) and the CPU-seconds per submission (benchmarks/cputime.py) in all and by part: this
process (the client; with Dask also the scheduler and the nannies, which run in it), the Dask
worker processes themselves, the grading jobs and their sandboxes (the rest), and PostgreSQL.
At the end, the ratio of Dask's CPU-seconds per submission to local grading's. The client's
imports are made before the first run (each run would pay them alike in a process of its own).
The load average is printed with each run: other work on the machine shows there.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cputime import CpuClock  # noqa: E402
from grading_speed import write_class  # noqa: E402

from attention_course.classgrade.cluster import connect  # noqa: E402
from attention_course.classgrade.gradebook import DB_ENV  # noqa: E402
from attention_course.classgrade.nbgrader_api import copy_course, gradebook_settings  # noqa: E402
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


def own_cpu() -> float:
    """CPU-seconds of this process alone, all its threads: the client, and for a LocalCluster
    its scheduler and nannies (they run in this process)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def workers_cpu(client) -> float:
    """CPU-seconds of the Dask worker processes themselves (not what they started)."""
    if client is None:
        return 0.0
    total = 0.0
    for pid in client.run(os.getpid).values():
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


class Parts:
    """CPU-seconds so far of each part of grading: everything in the benchmark's cgroup,
    this process, the Dask workers, PostgreSQL; the rest is the grading jobs and their
    sandboxes."""

    def __init__(self, cpu: CpuClock, server: PostgresServer, client=None):
        self.cpu, self.server, self.client = cpu, server, client
        self.values = self.read()

    def read(self) -> dict[str, float]:
        return {
            "all": self.cpu.seconds(),
            "client": own_cpu(),
            "workers": workers_cpu(self.client),
            "postgres": postgres_cpu(self.server),
        }

    def since(self) -> dict[str, float]:
        now = self.read()
        used = {k: now[k] - self.values[k] for k in now}
        used["jobs"] = used["all"] - used["client"] - used["workers"] - used["postgres"]
        return used


def idle_cost(cpu: CpuClock, client, seconds: float = 10.0) -> float:
    """The share of a core the Dask stack uses doing nothing (scheduler, nannies, workers,
    client), over `seconds`."""
    before, start = cpu.seconds(), time.perf_counter()
    time.sleep(seconds)
    return (cpu.seconds() - before) / (time.perf_counter() - start)


def grade(label, root, students, server, cpu, close=None, **how) -> dict[str, float]:
    """Grade the class; print and return its CPU-seconds per submission by part. `close`:
    stops the Dask cluster once its CPU time is read (its workers' connections end, and are
    counted)."""
    db_url = os.environ[DB_ENV] = server.new_database()
    client = how.get("scheduler")
    parts = Parts(cpu, server, client)
    start = time.perf_counter()
    run = autograde_class(ASSIGNMENT, root, **how)
    wall = time.perf_counter() - start
    used = {k: v / len(students) for k, v in parts.since().items()}
    failed = [s for s, o in run.outcomes.items() if o.status != "graded"]
    if close is not None:
        close()
    connections = server.sessions(db_url)
    who = "client, scheduler and nannies" if client is not None else "client"
    print(
        f"{label}: {wall:6.1f} s, {60 * len(students) / wall:5.1f} submissions per minute, "
        f"{connections / len(students):4.2f} gradebook connections per submission, {load()}"
        + (f", FAILED: {failed}" if failed else "")
        + f"\n    CPU-s per submission: {used['all']:4.2f} in all = {used['client']:4.2f} {who}"
        + (f" + {used['workers']:4.2f} Dask workers" if client is not None else "")
        + f" + {used['jobs']:4.2f} grading jobs and sandboxes + {used['postgres']:4.2f} "
        "PostgreSQL",
        flush=True,
    )
    return used


def main() -> None:
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
    # What the course's nbgrader_config.py imports (a second of CPU) is imported once here,
    # before any run: otherwise the first run's client pays it and the others do not.
    gradebook_settings(COURSE_ROOT)
    server = PostgresServer().start()
    dask: dict[int, dict[str, float]] = {}
    local: dict[int, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
            for workers in args.workers:
                root = copy_course(Path(tmp) / f"dask-{workers}", COURSE_ROOT)
                students = write_class(root, ASSIGNMENT, args.students)
                start = time.perf_counter()
                client, close = connect("local", workers)  # as `--scheduler local` makes it
                print(
                    f"Dask LocalCluster of {workers} up in {time.perf_counter() - start:.1f} s; "
                    f"idle, it uses {idle_cost(cpu, client):.3f} of a core"
                )
                label = f"Dask, {workers} worker{'s' if workers > 1 else ''}"
                dask[workers] = grade(
                    label, root, students, server, cpu, close, scheduler=client,
                    feedback=args.feedback,
                )  # fmt: skip
            for jobs in args.workers if args.local else []:
                root = copy_course(Path(tmp) / f"local-{jobs}", COURSE_ROOT)
                students = write_class(root, ASSIGNMENT, args.students)
                label = f"local, {jobs} job{'s' if jobs > 1 else ''} "
                local[jobs] = grade(
                    label, root, students, server, cpu, jobs=jobs, feedback=args.feedback
                )
    finally:
        server.stop()
        cpu.close()
    for n in sorted(set(dask) & set(local)):
        ratio = dask[n]["all"] / local[n]["all"]
        print(
            f"{n} worker(s) against {n} local job(s): Dask {dask[n]['all']:4.2f} CPU-s per "
            f"submission, local {local[n]['all']:4.2f}: {ratio:4.2f}x ({100 * (ratio - 1):+.0f}%)"
        )


if __name__ == "__main__":
    main()
