"""One pool of gradebook connections per process: nbgrader opens its gradebook anew at each step.

nbgrader's `Gradebook(db_url)` makes a new database engine each time (a new connection, the
tables reflected, `create_all`, the course row looked up) and `close()` throws the engine away;
one `autograde` opens it in about ten places. A grading job grades one submission after another
in one process, so `share()` makes every `Gradebook` of that process use one engine per URL: its
connections are pooled, checked before use (`pool_pre_ping`: a server that restarted is
reconnected to, not an error), and the tables and course row are made only by the first open.
Nothing else changes: each Gradebook still has a session of its own, and `close()` still ends it
(returning its connection to the pool).
"""

from __future__ import annotations

from typing import Any

from attention_course import trace
from attention_course.classgrade import gradebook

_engines: dict[str, Any] = {}  # gradebook URL -> the engine every Gradebook of it shares
_courses: set[tuple[str, str]] = set()  # (URL, course id) whose course row is known to exist


def share() -> None:
    """Make every nbgrader Gradebook of this process share one engine per URL (called once, by
    a grading job as it starts)."""
    from nbgrader.api import Gradebook

    gradebook.find_alembic()  # a new gradebook is stamped without a second Python process

    first_open = Gradebook.__init__

    def __init__(
        self: Any, db_url: str, course_id: str = "default_course", authenticator: Any = None
    ) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.orm import scoped_session, sessionmaker

        if db_url not in _engines:  # nbgrader's own first open: tables, alembic, course row
            first_open(self, db_url, course_id, authenticator)
            self.db.remove()
            self.engine.dispose()
            _engines[db_url] = create_engine(db_url, future=True, pool_pre_ping=True)
            _courses.add((db_url, course_id))
        self.engine = _engines[db_url]
        self.db = scoped_session(sessionmaker(autoflush=True, bind=self.engine, future=True))
        if (db_url, course_id) not in _courses:
            self.check_course(course_id=course_id)
            _courses.add((db_url, course_id))
        self.course_id = course_id
        self.authenticator = authenticator

    def close(self: Any) -> None:
        self.db.remove()  # the connection goes back to the pool; the engine stays

    Gradebook.__init__ = __init__
    Gradebook.close = close
    if trace.stages_on():
        _count_as_gradebook(Gradebook)


def _count_as_gradebook(cls: Any) -> None:
    """For the benchmarks' stages (trace.py): every Gradebook method, and every statement
    sent to the database from anywhere, counts as the stage "gradebook"."""
    import functools

    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    def counted(method: Any) -> Any:
        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with trace.stage("gradebook"):
                return method(*args, **kwargs)

        return wrapper

    for name, method in list(vars(cls).items()):
        if callable(method):  # its own methods: __init__, __enter__, __exit__ and the public
            setattr(cls, name, counted(method))

    def before(conn: Any, *args: Any) -> None:
        conn.info.setdefault("stages", []).append(trace.stage("gradebook"))
        conn.info["stages"][-1].__enter__()

    def after(conn: Any, *args: Any) -> None:
        if conn is not None and conn.info.get("stages"):
            conn.info["stages"].pop().__exit__()

    event.listen(Engine, "before_cursor_execute", before)
    event.listen(Engine, "after_cursor_execute", after)
    event.listen(Engine, "handle_error", lambda context: after(context.connection))
