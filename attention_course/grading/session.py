"""One grading session, as pytest (pytest_plugin.py) and the grading jobs (runner.py) both run it.

A session runs the submission's program once in the sandbox, with every call the collected
grader files declared, then each grader test reads the outcomes through `Student`. Only the
grader's own `Fail` is a student outcome; anything else a test raises is a fault of grading.
A program run that failed is not run again for the next test (its fault is the next test's
too), and every program run of the session shares the submission's one absolute deadline:
however many tests there are, grading one submission ends within its time.

Functions computed outside: masks_and_heads' functions call helpers the student pastes from
attention_basics, and a graded function may call others of its own notebook (course.toml's
`callees`: scaled_dot_product_attention calls softmax, multi_head_attention split_heads and
combine_heads). A test of such a function that fails is run again on a second program run of
the student's cells in which each of them (never the function itself) is computed outside:
every call the student's code makes of it goes out over the wire to this process, which
computes the course's (the reference) and sends the value back (sandbox/program.py
`outside`). No code or source of the reference is in the sandbox. If the test passes there, it
counts as passed only if the student's own helpers or callees really give other values on the
calls that test's calls made of them: those calls are asked of the student's own functions (a
run of its cells, as the first) and compared with the reference's at the graders' tolerance
(`harness.same_value`); where they all agree, the second run proves nothing and the failure
stands. A test that counts is noted, for each function that differed, for the file's 0-point
tests that name a pasted helper (`HELPER_NOTE`) or a graded callee (`CALLEE_NOTE`): the bug
costs points in that function's own tests only. Only pass or fail comes from the second run,
never a message.
"""

from __future__ import annotations

from collections.abc import Callable

from attention_course.course import Course
from attention_course.grading import course_graders, harness
from attention_course.sandbox.program import Call, Outcome, OutsideCall, ProgramRun

HELPER_NOTE = "passed_only_with_course"  # the parameter of the 0-point test that names a helper
CALLEE_NOTE = "passed_only_with_callees"  # ... and of the one that names a graded callee
NOTES = (HELPER_NOTE, CALLEE_NOTE)


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
        self._second: dict[tuple[str, ...], ProgramRun] = {}  # by the functions given outside
        self._second_failed: dict[tuple[str, ...], Exception] = {}
        self._own: dict[tuple[str, ...], list[Outcome]] = {}  # the student's, per outside call
        self.passed_only_with_course: dict[str, list[str]] = {}  # function -> test descriptions
        # function -> graded callee -> descriptions of the tests that passed only with the
        # course's callee
        self.passed_only_with_callees: dict[str, dict[str, list[str]]] = {}

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

    def outside_of(self, function: str) -> tuple[str, ...]:
        """What the second run of `function`'s tests computes outside: its assignment's pasted
        helpers and its graded callees, never `function` itself."""
        given = {*self.course.helpers_of(function), *self.course.callees_of(function)}
        return tuple(sorted(given - {function}))

    def with_course_functions(self, names: tuple[str, ...]) -> ProgramRun:
        """A second program run: the student's cells, each of `names` computed outside by the
        course's reference (one run per set of names and session)."""
        if names in self._second_failed:
            raise self._second_failed[names]
        try:
            if names not in self._second:
                reference = course_graders.reference(self.course)
                outside = {name: getattr(reference, name) for name in names}
                calls = [c for c in self.calls if c.function not in names]
                self._second[names] = self._run(self.program, calls, outside=outside)
            return self._second[names]
        except Exception as exc:
            self._second_failed[names] = exc
            raise

    def differing(self, names: tuple[str, ...], keys: list[str]) -> set[str]:
        """The functions of `names` whose student's own values differ from the course's on
        the calls that the calls `keys` made of them in the second run."""
        run = self._second[names]
        asked = [o for k in dict.fromkeys(keys) for o in run.outside_calls.get(k, [])]
        if not asked:
            return set()
        own = self._own_values(names)
        position = {id(o): i for i, o in enumerate(self._asked(names))}
        found = set()
        for o in asked:
            got = own[position[id(o)]]
            if got.status != "ok" or not harness.same_value(got.value, o.value):
                found.add(o.function)
        return found

    def _asked(self, names: tuple[str, ...]) -> list[OutsideCall]:
        return [o for calls in self._second[names].outside_calls.values() for o in calls]

    def _own_values(self, names: tuple[str, ...]) -> list[Outcome]:
        """The student's own functions on every outside call of the second run of `names`
        (one more run of its cells, as the first: nothing computed outside)."""
        if names not in self._own:
            calls = [
                Call(f"own#{i}", o.function, o.args, o.kwargs)
                for i, o in enumerate(self._asked(names))
            ]
            run = self._run(self.program, calls) if calls else None
            self._own[names] = [run.outcomes[c.key] if run else Outcome("skipped") for c in calls]
        return self._own[names]

    def call(self, fn: Callable, function: str, args: dict) -> None:
        """Run one grader test; a Fail that the course's helpers or callees would have avoided
        counts as passed (and is noted for the 0-point tests that name them)."""
        names = self.outside_of(function)
        if not names or "student" not in args or any(n in args for n in NOTES):
            fn(**args)
            return
        try:
            fn(**args)
        except harness.Fail:
            run = self.with_course_functions(names)
            retry = _Reading(run.outcomes)
            try:
                fn(**dict(args, student=retry))
            except harness.Fail:
                pass
            else:
                differ = self.differing(names, retry.read)
                if differ:
                    self._note(function, description(fn), differ)
                    return
            raise  # the failure with the student's own functions: its message, not the retry's

    def _note(self, function: str, test: str, differ: set[str]) -> None:
        """Note `test` of `function` as passed only with the course's `differ`."""
        callees = self.course.callees_of(function)
        if differ - set(callees):
            self.passed_only_with_course.setdefault(function, []).append(test)
        for callee in sorted(differ & set(callees)):
            found = self.passed_only_with_callees.setdefault(function, {})
            found.setdefault(callee, []).append(test)


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
