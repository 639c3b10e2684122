"""The course's grading service under JupyterHub: students check a notebook with the hidden
graders before the deadline.

JupyterHub starts it (`c.JupyterHub.services`, `hub_service`); every request carries a hub
token, and the student is whoever the hub says owns it (jupyterhub.services.auth.HubAuth):
a request may not name another student, and a check is read only by its student and the
instructors (members of the instructors' hub group, or named in the service's options).

    POST {prefix}api/checks?assignment=A     body: the notebook (.ipynb bytes)
    GET  {prefix}api/checks/ID               the check: state, score, PASS/FAIL lines, hints
    GET  {prefix}api/checks                  your checks; ?all=1 every student's (instructors)
    GET  {prefix}api/limit?assignment=A      checks left now

A notebook is read off the event loop, by a small pool of processes with time and memory
limits (check_intake.Intake), one notebook of a student at a time; a check is queued fairly
(check_limits.FairQueue), graded by a bounded pool of processes (check_grading.GradingPool) and
recorded in the gradebook database (check_limits.CheckRecords).

Abuse costs its student, never the others: a body over `HubCheck.notebook_bytes`, or a notebook
that reaches the intake's time or memory limit, is refused and charged as a check (of the
assignment named, or of each checked assignment when none is); a student with no check left is
refused before their notebook is read. One student's requests delay another's reading by at
most `intake_seconds` and only while every intake worker is held by a different abusive
student (benchmarks/check_service_burst.py measures it); the service's own memory is capped
(`HubCheck.service_memory`, RLIMIT_DATA).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from attention_course.course import Course
from attention_course.integrations.check_grading import GRADING, STUDENTS, Graded, GradingPool
from attention_course.integrations.check_intake import Intake
from attention_course.integrations.check_limits import (
    FAILED,
    GRADED,
    REJECTED,
    CheckRecord,
    CheckRecords,
    FairQueue,
    Refusal,
    due_decision,
    iso,
    readable,
)
from attention_course.settings import CHECK_URL_ENV, HUB_CHECK, HubCheck

log = logging.getLogger("attention_course.hub_check")


def service_scope(name: str = HUB_CHECK.service_name) -> str:
    """The hub scope a token needs to reach the service."""
    return f"access:services!service={name}"


def hub_service(
    course: Path,
    port: int,
    name: str = HUB_CHECK.service_name,
    options: tuple[str, ...] = (),
    program: Path | None = None,
    user: str | None = None,
) -> dict[str, Any]:
    """The entry of `c.JupyterHub.services` that runs the service for `course` on
    127.0.0.1:`port` (the hub starts it and gives it its token), as `user` (the account that
    owns the course and its gradebook; default: the hub's)."""
    program = program or Path(sys.executable).with_name("attention-course")
    entry: dict[str, Any] = {
        "name": name,
        "url": f"http://127.0.0.1:{port}",
        "command": [str(program), "hub-check-service", "--course", str(course), *options],
        "display": False,
    }
    if user:
        entry["user"] = user
    return entry


def hub_settings(public_url: str, name: str = HUB_CHECK.service_name) -> dict[str, Any]:
    """What else jupyterhub_config.py sets for the service: every user may reach it, and so
    may each student's server's token (what `attention-course hub-check` sends), which also
    gets the service's address ($ATTENTION_COURSE_CHECK_URL)."""
    scope = service_scope(name)
    return {
        "load_roles": [{"name": "user", "scopes": ["self", scope]}],
        "server_token_scopes": ["users:activity!user", "access:servers!server", scope],
        "environment": {CHECK_URL_ENV: public_url.rstrip("/") + f"/services/{name}/"},
    }


def hub_config_lines(
    program: Path,
    port: int,
    options: tuple[str, ...] = (),
    course: str = "COURSE",
    instructor: str = "INSTRUCTOR",
    name: str = HUB_CHECK.service_name,
) -> list[str]:
    """Lines to add to the jupyterhub_config.py that `attention-course jupyterhub` writes
    (after it: they use its names `course` and `instructor`, the course folder and the
    instructor's account, and its bind_url): the service run as the instructor, its role,
    the students' servers' token scope and $ATTENTION_COURSE_CHECK_URL."""
    scope = service_scope(name)
    command = [str(program), "hub-check-service", "--course"]
    return [
        "# The course's grading service: students check notebooks with the hidden graders.",
        "c.JupyterHub.services = list(c.JupyterHub.services) + [{",
        f"    'name': {name!r},",
        f"    'url': 'http://127.0.0.1:{port}',",
        f"    'command': {command!r}",
        f"    + [{course}, '--instructors', {instructor}, *{list(options)!r}],",
        f"    'user': {instructor},",
        "    'display': False,",
        "}]",
        "c.JupyterHub.load_roles = list(c.JupyterHub.load_roles) + "
        f"[{{'name': 'user', 'scopes': ['self', {scope!r}]}}]",
        "c.Spawner.server_token_scopes = "
        f"{['users:activity!user', 'access:servers!server', scope]!r}",
        "c.Spawner.environment = {**c.Spawner.environment, "
        f"{CHECK_URL_ENV!r}: c.JupyterHub.bind_url.rstrip('/') + '/services/{name}/'}}",
    ]


FOLDER_PREFIX = "attention-checks-"  # + the service's pid: its notebooks waiting to be graded


def _remove_stale_folders() -> None:
    """The folders of this account's services that are no longer running (killed: they
    could not remove them), with the notebooks they held."""
    for folder in Path(tempfile.gettempdir()).glob(FOLDER_PREFIX + "*-*"):
        pid = folder.name[len(FOLDER_PREFIX) :].split("-")[0]
        try:
            mine = folder.is_dir() and folder.lstat().st_uid == os.getuid()
        except OSError:
            continue
        if mine and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Pending:
    path: Path
    late_note: str


class CheckService:
    """What the HTTP handlers call: take a check, grade it in turn, answer about it."""

    def __init__(
        self,
        course: Course,
        records: CheckRecords,
        settings: HubCheck,
        due: Callable[[str, str], float | None],  # (assignment, student): their due date
        late_penalty: str = "none",
        instructors: frozenset[str] = frozenset(),
        instructor_group: str = "instructors",
        clock: Callable[[], float] = time.time,
    ):
        self.course = course
        self.records = records
        self.settings = settings
        self.due = due
        self.late_penalty = late_penalty
        self.instructors = instructors
        self.instructor_group = instructor_group
        self.clock = clock
        self.queue = FairQueue()
        self.pool = GradingPool(settings.workers)
        self.pending: dict[str, Pending] = {}
        self.intake = Intake(course.root, settings)
        self._reading: set[str] = set()  # students whose notebook is being read
        self._reading_lock = threading.Lock()
        _remove_stale_folders()
        self.folder = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))  # 0700
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def is_instructor(self, user: dict[str, Any]) -> bool:
        return user.get("name") in self.instructors or self.instructor_group in (
            user.get("groups") or []
        )

    def start(self) -> None:
        stale = self.records.interrupted(self.clock())
        if stale:
            log.warning("%d checks left by a stopped service: marked failed", stale)
        for n in range(self.settings.workers):
            thread = threading.Thread(target=self._work, name=f"check-worker-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self.pool.close()
        self.intake.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def submit(self, student: str, body: bytes, assignment: str | None) -> tuple[int, dict]:
        """A check asked by `student` (as the hub says): (HTTP status, answer). Blocks while
        the notebook is read (call it off the event loop); one notebook of a student at a
        time: another sent meanwhile is refused at once."""
        with self._reading_lock:
            if student in self._reading:
                return 429, {"error": "a notebook of yours is being read: wait for its answer"}
            self._reading.add(student)
        try:
            return self._submit(student, body, assignment)
        finally:
            with self._reading_lock:
                self._reading.discard(student)

    def _submit(self, student: str, body: bytes, assignment: str | None) -> tuple[int, dict]:
        if assignment is not None and assignment not in self.course.assignments:
            known = ", ".join(self.course.assignments)
            return 400, {"error": f"unknown assignment {assignment!r} (known: {known})"}
        charged = [assignment] if assignment else list(self.course.assignments)
        now = self.clock()
        limits = [self.records.used_up(student, a, self.settings, now) for a in charged]
        used_up = [r for r in limits if r is not None]
        if len(used_up) == len(charged):  # no check left to charge: the notebook is not read
            return self._refusal(min(used_up, key=lambda r: r.next_allowed or 0.0))
        if len(body) > self.settings.notebook_bytes:
            limit = self.settings.notebook_bytes / 2**20
            return self._charge(student, charged, f"the notebook is larger than {limit:g} MiB", 413)
        folder = Path(tempfile.mkdtemp(dir=self.folder))
        path = folder / "submission.ipynb"
        path.write_bytes(body)
        keep = False
        try:
            read = self.intake.read(path, assignment)
            if read.abusive:
                return self._charge(student, charged, str(read.error), 400)
            if read.assignment is None:
                return 400, {"error": read.error}
            assignment = read.assignment
            if assignment not in self.course.assignments:
                return 400, {"error": f"{assignment} is not checked here (only graded notebooks)"}
            named = folder / f"{assignment}.ipynb"
            path.rename(named)
            now = self.clock()
            decision = due_decision(
                self.due(assignment, student), now, self.settings.after_due, self.late_penalty
            )
            if not decision.allowed:
                return 403, {"error": decision.message}
            found = self.records.reserve(student, assignment, self.settings, now, decision.late)
            if isinstance(found, Refusal):
                return self._refusal(found)
            self.pending[found.id] = Pending(named, decision.message)
            keep = True
            self.queue.put(student, found.id)
            left = self.records.left(student, assignment, self.settings, now)
            return 202, {
                "check": found.answer(),
                "checks_left": left,
                "per_day": self.settings.per_day,
                "window_seconds": self.settings.window,
                "note": decision.message,
            }
        finally:
            if not keep:
                shutil.rmtree(folder, ignore_errors=True)

    @staticmethod
    def _refusal(found: Refusal) -> tuple[int, dict]:
        return 429, {
            "error": found.text(),
            "reason": found.reason,
            "next_allowed": iso(found.next_allowed),
            "next_allowed_text": (
                readable(found.next_allowed) if found.next_allowed is not None else None
            ),
        }

    def _charge(
        self, student: str, assignments: list[str], why: str, status: int
    ) -> tuple[int, dict]:
        """An abusive request refused, and counted as a check of each of `assignments`."""
        counted = self.records.refused(student, assignments, self.clock(), f"not checked: {why}\n")
        what = ", ".join(assignments)
        return status, {"error": f"{why}; this counts as a check of {what}", "counted": counted}

    def _work(self) -> None:
        while not self._stop.is_set():
            taken = self.queue.take(timeout=0.5)
            if taken is None:
                continue
            _, check_id = taken
            pending = self.pending.pop(check_id)
            try:
                self.records.start(check_id)
                graded = self.pool.grade(
                    self.course.root, pending.path.stem, pending.path, pending.late_note
                )
            except Exception as exc:  # noqa: BLE001 (a fault of grading, said to nobody but the log)
                log.exception("check %s", check_id)
                said = "not checked: the graders could not run (not your fault); try again later"
                graded = Graded(None, None, said, f"{type(exc).__name__}: {exc}", GRADING)
            finally:
                shutil.rmtree(pending.path.parent, ignore_errors=True)
            state = {None: GRADED, STUDENTS: REJECTED, GRADING: FAILED}[graded.fault]
            try:
                self.records.finish(
                    check_id,
                    state,
                    self.clock(),
                    graded.score,
                    graded.max_score,
                    graded.feedback,
                    graded.detail,
                )
            except Exception:  # noqa: BLE001 (the gradebook went away: the check stays running,
                # and the next start of the service fails it, so it does not count)
                log.exception("recording check %s", check_id)

    def read(self, user: dict[str, Any], check_id: str) -> tuple[int, dict]:
        """A check, for its student or an instructor; for anyone else, as if there were none."""
        record = self.records.get(check_id)
        instructor = self.is_instructor(user)
        if record is None or (record.student != user["name"] and not instructor):
            return 404, {"error": f"no check {check_id[:40]} of yours"}
        return 200, {"check": self._shown(record, instructor)}

    def listing(
        self, user: dict[str, Any], every: bool, assignment: str | None, student: str | None
    ) -> tuple[int, dict]:
        instructor = self.is_instructor(user)
        if (every or student) and not instructor:
            return 403, {"error": "only the course's instructors see every student's checks"}
        who = student if instructor else user["name"]
        if instructor and every and not student:
            who = None
        records = self.records.list(who, assignment)
        return 200, {"checks": [self._shown(r, instructor) for r in records]}

    def limit(self, user: dict[str, Any], assignment: str) -> tuple[int, dict]:
        if assignment not in self.course.assignments:
            return 400, {"error": f"unknown assignment {assignment!r}"}
        left = self.records.left(user["name"], assignment, self.settings, self.clock())
        return 200, {
            "assignment": assignment,
            "checks_left": left,
            "per_day": self.settings.per_day,
            "window_seconds": self.settings.window,
        }

    @staticmethod
    def _shown(record: CheckRecord, instructor: bool) -> dict[str, Any]:
        return record.for_instructor() if instructor else record.answer()


UNAVAILABLE = "the course's gradebook does not answer; try again later"


def guarded(call: Callable[[], tuple[int, dict]]) -> tuple[int, dict]:
    """A service call's answer; the gradebook not answering (the due date, the limit, the
    records) is 503 in one line, the infrastructure's fault, nothing counted."""
    import sqlalchemy.exc

    from attention_course.errors import GradebookUnavailable

    try:
        return call()
    except (GradebookUnavailable, sqlalchemy.exc.SQLAlchemyError, OSError) as exc:
        log.warning("gradebook: %s", " ".join(str(exc).split())[:300])
        return 503, {"error": UNAVAILABLE}


def make_app(service: CheckService, prefix: str) -> Any:
    """The tornado application of the service, its routes under the hub's `prefix`."""
    from concurrent.futures import ThreadPoolExecutor

    from jupyterhub.services.auth import HubAuthenticated
    from tornado import web
    from tornado.ioloop import IOLoop

    # The threads that take a notebook (its student's slot, the limit, the intake): more than
    # the intake's workers, so that a refusal never waits behind a reading.
    readers = ThreadPoolExecutor(4 * service.settings.intake_workers, "check-intake")

    class Handler(HubAuthenticated, web.RequestHandler):
        def check_xsrf_cookie(self) -> None:  # token authentication only: no cookies
            return None

        def user(self) -> dict[str, Any]:
            user = self.get_current_user()
            if not user or user.get("kind", "user") != "user":
                raise web.HTTPError(403, "a student's hub token is needed")
            return user

        def answer(self, status: int, body: dict) -> None:
            self.set_status(status)
            self.set_header("Content-Type", "application/json")
            self.set_header("Cache-Control", "no-store")
            self.finish(json.dumps(body))

        def write_error(self, status_code: int, **kwargs: Any) -> None:
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"error": self._reason}))

    class Checks(Handler):
        async def post(self) -> None:
            user = self.user()
            claimed = self.get_argument("student", None)
            if claimed is not None and claimed != user["name"]:
                self.answer(403, {"error": f"you may check only your own work ({user['name']})"})
                return
            assignment = self.get_argument("assignment", None)
            body = self.request.body
            answer = await IOLoop.current().run_in_executor(
                readers, guarded, lambda: service.submit(user["name"], body, assignment)
            )
            self.answer(*answer)

        def get(self) -> None:
            user = self.user()
            every = self.get_argument("all", "") in ("1", "true", "yes")
            assignment = self.get_argument("assignment", None)
            student = self.get_argument("student", None)
            self.answer(*guarded(lambda: service.listing(user, every, assignment, student)))

    class OneCheck(Handler):
        def get(self, check_id: str) -> None:
            user = self.user()
            self.answer(*guarded(lambda: service.read(user, check_id)))

    class Limit(Handler):
        def get(self) -> None:
            user, assignment = self.user(), self.get_argument("assignment")
            self.answer(*guarded(lambda: service.limit(user, assignment)))

    return web.Application(
        [
            (prefix + "api/checks", Checks),
            (prefix + r"api/checks/([0-9a-f]{1,64})", OneCheck),
            (prefix + "api/limit", Limit),
        ],
        max_body_size=2 * service.settings.notebook_bytes,
    )


def limit_service_memory(limit: int) -> None:
    """The service's own memory limit (RLIMIT_DATA, soft: the processes it starts set their
    own); never raised when the service was started with a lower one."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if soft == resource.RLIM_INFINITY or soft > limit:
        within = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (within, hard))


def serve(service: CheckService) -> None:
    """Run the service where the hub says ($JUPYTERHUB_SERVICE_URL, _PREFIX) until stopped."""
    import asyncio
    import signal

    from tornado.httpserver import HTTPServer

    limit_service_memory(service.settings.service_memory)
    url = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", f"/services/{HUB_CHECK.service_name}/")
    service.start()

    async def main() -> None:
        server = HTTPServer(make_app(service, prefix), xheaders=True)
        server.listen(url.port or 80, url.hostname or "127.0.0.1")
        stopped = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stopped.set)
        log.info("checking %s at %s%s", service.course.id, url.geturl(), prefix)
        await stopped.wait()
        server.stop()

    try:
        asyncio.run(main())
    finally:
        service.stop()
