"""A throwaway PostgreSQL server for the tests and benchmarks: Debian's PostgreSQL, a cluster
made with initdb in a temporary folder, listening on a free port of 127.0.0.1, gone when stopped.

PostgreSQL refuses to run as root: as root, the server runs as the `postgres` account that
Debian's package creates (or a system account made for it), switched to with `setpriv`.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tests.processes import free_port

SUPERUSER = "attention"
ACCOUNTS = ("postgres", "attention-pg")


class ServerUnavailable(RuntimeError):
    """PostgreSQL's programs are missing or the server did not start; says why."""


def binaries() -> Path:
    """The folder of initdb and pg_ctl: Debian keeps them off PATH, one folder per version."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent

    def version(path: str) -> int:
        name = Path(path).parent.parent.name
        return int(name) if name.isdigit() else 0

    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if not versions:
        raise ServerUnavailable(
            "PostgreSQL is not installed (apt-get install postgresql; scripts/setup.sh does it "
            "as root)"
        )
    return Path(versions[-1]).parent


def _account() -> pwd.struct_passwd | None:
    """The unprivileged account the server runs as when we are root (None: run as we are)."""
    if os.geteuid() != 0:
        return None
    for name in ACCOUNTS:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ACCOUNTS[-1]],
        check=True,
        capture_output=True,
    )
    return pwd.getpwnam(ACCOUNTS[-1])


class PostgresServer:
    """`start()`, then `new_database()` for a URL of an empty database; `stop()` at the end."""

    def __init__(self):
        self.bin = binaries()
        self.account = _account()
        self.folder = Path(tempfile.mkdtemp(prefix="attention-pg-", dir="/tmp"))
        self.data = self.folder / "data"
        self.port = 0
        self.options = ""
        self.started = False

    def _run(self, *cmd: str, timeout: float = 120) -> subprocess.CompletedProcess:
        prefix = []
        if self.account is not None:
            prefix = ["setpriv", f"--reuid={self.account.pw_uid}"]
            prefix += [f"--regid={self.account.pw_gid}", "--clear-groups", "--"]
        env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
        if self.account is not None:
            env["HOME"] = str(self.folder)
        return subprocess.run(
            [*prefix, *cmd], capture_output=True, text=True, env=env, timeout=timeout, cwd="/"
        )

    def start(self) -> PostgresServer:
        if self.account is not None:
            os.chown(self.folder, self.account.pw_uid, self.account.pw_gid)
        done = self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        if done.returncode:
            raise ServerUnavailable(f"initdb failed: {done.stderr.strip()[-500:]}")
        for _ in range(5):  # a free port can be taken between looking and listening
            self.port = free_port()
            # fsync off (the machine does not crash in a test), but a commit is written before
            # it returns (synchronous_commit on): a server killed at once (`crash`) keeps every
            # commit, as a production server does
            options = (
                f"-p {self.port} -h 127.0.0.1 -k {self.folder} -c fsync=off "
                "-c synchronous_commit=on -c full_page_writes=off -c max_connections=200"
            )
            self.options = options
            if self._pg_ctl_start().returncode == 0:
                self.started = True
                return self
        log = (self.folder / "server.log").read_text(errors="replace")[-800:]
        raise ServerUnavailable(f"the PostgreSQL server did not start: {log}")

    def _pg_ctl_start(self) -> subprocess.CompletedProcess:
        return self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.folder / "server.log"),
            "-o",
            self.options,
            "-w",
            "-t",
            "60",
            "start",
        )

    def crash(self) -> None:
        """Stop the server at once, as a crash or a power cut does (`pg_ctl stop -m
        immediate`: every connection cut, no shutdown checkpoint)."""
        done = self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        if done.returncode:
            raise ServerUnavailable(f"pg_ctl stop failed: {done.stderr.strip()[-500:]}")

    def restart(self) -> None:
        """Start a crashed server again, on the same port (it recovers from its WAL)."""
        if self._pg_ctl_start().returncode:
            log = (self.folder / "server.log").read_text(errors="replace")[-800:]
            raise ServerUnavailable(f"the PostgreSQL server did not start again: {log}")

    def processes(self) -> list[int]:
        """The server's processes: its postmaster (postmaster.pid) and every process it
        started (its backends and helpers), found by their parent in /proc."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        found = [postmaster]
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                found.append(int(entry.name))
        return found

    def freeze(self) -> list[int]:
        """Stop every process of the server (SIGSTOP), as a storage or VM stall stops it: its
        connections stay open and nothing answers. Returns them, for `thaw`."""
        stopped = []
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
            except ProcessLookupError:
                continue
        return stopped

    def thaw(self, stopped: list[int]) -> None:
        """Let the stopped processes go on (SIGCONT)."""
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                continue

    def _client(self, program: str, *args: str) -> subprocess.CompletedProcess:
        """One of PostgreSQL's client programs of the server's version, against it."""
        done = subprocess.run(
            [str(self.bin / program), "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER]
            + list(args),
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode:
            raise ServerUnavailable(f"{program} failed: {done.stderr.strip()[-500:]}")
        return done

    def dump(self, db_url: str, path: Path) -> None:
        """A backup of the database of `db_url` (pg_dump's custom format) into `path`."""
        self._client("pg_dump", "-Fc", "-f", str(path), self.database_of(db_url))

    def restore(self, db_url: str, path: Path) -> None:
        """The database of `db_url` made anew (dropped, created) from the backup at `path`
        (pg_restore), as an operator restores a lost or damaged gradebook."""
        name = self.database_of(db_url)
        self._client("dropdb", "--if-exists", name)
        self._client("createdb", name)
        self._client("pg_restore", "--no-owner", "-d", name, str(path))

    @staticmethod
    def database_of(db_url: str) -> str:
        return db_url.rsplit("/", 1)[-1].split("?")[0]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def new_database(self, prefix: str = "gradebook") -> str:
        """The URL of a new, empty database (nbgrader makes the tables)."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(
            f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def sessions(self, db_url: str) -> int:
        """How many connections to the database of `db_url` have ended so far (PostgreSQL
        counts a session when it ends; this one's own reading is not among them)."""
        import psycopg

        name = db_url.rsplit("/", 1)[-1].split("?")[0]
        time.sleep(1.5)  # a backend reports its statistics within a second of ending
        with psycopg.connect(f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres") as conn:
            row = conn.execute(
                "SELECT sessions FROM pg_stat_database WHERE datname = %s", (name,)
            ).fetchone()
        return int(row[0]) if row else 0

    def stop(self) -> None:
        if self.started:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
            self.started = False
        shutil.rmtree(self.folder, ignore_errors=True)


def wait_for(predicate, seconds: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
