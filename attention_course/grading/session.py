"""One grading session, as pytest (pytest_plugin.py) and the grading jobs (runner.py) both run it.

A session runs the submission's program once in the sandbox, with every call the collected
grader files declared, then each grader test reads the outcomes through `Student`. Only the
grader's own `Fail` is a student outcome; anything else a test raises is a fault of grading.
A program run that failed is not run again for the next test (its fault is the next test's
too), and every program run of the session shares the submission's one absolute deadline:
however many tests there are, grading one submission ends within its time.

Pasted helpers: masks_and_heads' functions call helpers the student pastes from
attention_basics. A test of such a function that fails is run again on a second program run of
the student's cells in which each helper is computed outside: every call the student's code makes
of it goes out over the wire to this process, which computes the course's helper (the reference)
and sends the value back (sandbox/program.py `outside`). No code or source of the reference is in
the sandbox. If the test passes there, it counts as passed only if the student's own helper
really gives other values on the helper calls that test's calls made: those calls are asked of
the student's own helpers (a run of its cells, as the first) and compared with the reference's
at the graders' tolerance (`harness.same_value`); where they agree, the second run proves
nothing and the failure stands. A test that counts is noted for the file's 0-point test, which
names the helper. Only pass or fail comes from the second run, never a message.
"""

from __future__ import annotations

from collections.abc import Callable

from attention_course.course import Course
from attention_course.grading import course_graders, harness
from attention_course.sandbox.program import Call, Outcome, OutsideCall, ProgramRun

HELPER_NOTE = "passed_only_with_course"  # the parameter of the 0-point test that names a helper


def description(fn: Callable) -> str:
    return (fn.__doc__ or fn.__name__).strip().splitlines()[0]


class _Reading(harness.Student):
    """A Student that notes which calls a test reads."""

    def __init__(self, outcomes: dict[str, Outcome]):
        super().__init__(outcomes)
        self.read: list[str] = []

    def outcome(self, c: Call) -> Outcome:
        self.read.append(c.key)
        return super().outcome(c)


class Session:
    """The outcomes of one submission's program, and what grading learned on the way."""

    def __init__(
        self,
        program: list[tuple[str, str]],
        calls: list[Call],
        run: Callable[..., ProgramRun],
        course: Course,
    ):
        self.course = course
        self.program = program
        self.calls = calls
        self._run = run
        self._program_run: ProgramRun | None = None
        self._failed: Exception | None = None  # why the program could not be run
        self._with_course: ProgramRun | None = None
        self._with_course_failed: Exception | None = None
        self._own: dict[int, Outcome] | None = None  # index in _asked -> the student's own
        self._asked: list[OutsideCall] = []
        self.passed_only_with_course: dict[str, list[str]] = {}

    @property
    def program_run(self) -> ProgramRun:
        if self._program_run is None:
            if self._failed is not None:
                raise self._failed
            try:
                self._program_run = self._run(self.program, self.calls)
            except Exception as exc:
                self._failed = exc
                raise
        return self._program_run

    @property
    def student(self) -> harness.Student:
        return harness.Student(self.program_run.outcomes)

    def with_course_helpers(self, helpers: tuple[str, ...]) -> ProgramRun:
        """The second program run: the student's cells, each helper computed outside by the
        course's reference (one run per session)."""
        if self._with_course_failed is not None:
            raise self._with_course_failed
        try:
            if self._with_course is None:
                reference = course_graders.reference(self.course)
                outside = {h: getattr(reference, h) for h in helpers}
                calls = [c for c in self.calls if c.function not in helpers]
                self._with_course = self._run(self.program, calls, outside=outside)
            return self._with_course
        except Exception as exc:
            self._with_course_failed = exc
            raise

    def helpers_differ(self, run: ProgramRun, keys: list[str]) -> bool:
        """Whether the student's own helpers give other values than the course's on the
        helper calls that the calls `keys` made in the second run `run`."""
        asked = [o for k in dict.fromkeys(keys) for o in run.outside_calls.get(k, [])]
        if not asked:
            return False
        own = self._own_values()
        position = {id(o): i for i, o in enumerate(self._asked)}
        for o in asked:
            got = own[position[id(o)]]
            if got.status != "ok" or not harness.same_value(got.value, o.value):
                return True
        return False

    def _own_values(self) -> dict[int, Outcome]:
        """The student's own helpers on every helper call of the second run (one more run of
        its cells, as the first: no helper computed outside)."""
        if self._own is None:
            assert self._with_course is not None
            self._asked = [o for calls in self._with_course.outside_calls.values() for o in calls]
            calls = [
                Call(f"own#{i}", o.function, o.args, o.kwargs) for i, o in enumerate(self._asked)
            ]
            run = self._run(self.program, calls) if calls else None
            self._own = {
                i: run.outcomes[c.key] if run else Outcome("skipped") for i, c in enumerate(calls)
            }
        return self._own

    def call(self, fn: Callable, function: str, args: dict) -> None:
        """Run one grader test; a Fail that the course's helpers would have avoided counts as
        passed (and is noted for the 0-point test that names the helper)."""
        helpers = self.course.helpers_of(function)
        if not helpers or "student" not in args or HELPER_NOTE in args:
            fn(**args)
            return
        try:
            fn(**args)
        except harness.Fail:
            run = self.with_course_helpers(helpers)
            retry = _Reading(run.outcomes)
            try:
                fn(**dict(args, student=retry))
            except harness.Fail:
                pass
            else:
                if self.helpers_differ(run, retry.read):
                    self.passed_only_with_course.setdefault(function, []).append(description(fn))
                    return
            raise  # the failure with the student's own helpers: its message, not the retry's


def record(function: str, name: str, fn: Callable, points: float, passed: bool, message: str):
    """One line of the report: what a grader test found."""
    return {
        "function": function,
        "test": name,
        "description": description(fn),
        "points": points,
        "passed": passed,
        "message": message,
    }


def report(session: Session | None, tests: list[dict], faults: list[str]) -> dict:
    run = session._program_run if session is not None else None
    return {
        "faults": faults,
        "tests": tests,
        "cell_errors": [vars(c) for c in run.cell_errors] if run else [],
        "notes": run.notes if run else [],
        "workers": run.workers if run else 0,
    }
