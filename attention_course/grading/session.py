"""One grading session, as pytest (pytest_plugin.py) and the grading jobs (runner.py) both run it.

A session runs the submission's program once in the sandbox, with every call the collected
grader files declared, then each grader test reads the outcomes through `Student`. Only the
grader's own `Fail` is a student outcome; anything else a test raises is a fault of grading.
A program run that failed is not run again for the next test (its fault is the next test's
too), and every program run of the session shares the submission's one absolute deadline:
however many tests there are, grading one submission ends within its time.

Pasted helpers: masks_and_heads' functions call helpers the student pastes from
attention_basics. A test of such a function that fails is run again on a second program: the
student's cells followed by the course's helpers (grader_tests/pasted_helpers.py). If it
passes there,
the function itself is right: the test counts as passed, and the file's 0-point test names the
helper. Only pass or fail comes from the second program, never a message, so nothing of the
course's helpers reaches the student.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from attention_course.course import Course
from attention_course.grading import course_graders, harness
from attention_course.sandbox.program import Call, ProgramRun

HELPER_NOTE = "passed_only_with_course"  # the parameter of the 0-point test that names a helper


def description(fn: Callable) -> str:
    return (fn.__doc__ or fn.__name__).strip().splitlines()[0]


class Session:
    """The outcomes of one submission's program, and what grading learned on the way."""

    def __init__(
        self,
        program: list[tuple[str, str]],
        calls: list[Call],
        run: Callable[[list, list], ProgramRun],
        course: Course,
    ):
        self.course = course
        self.program = program
        self.calls = calls
        self._run = run
        self._program_run: ProgramRun | None = None
        self._failed: Exception | None = None  # why the program could not be run
        self._with_course: harness.Student | None = None
        self._with_course_failed: Exception | None = None
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

    def with_course_helpers(self, helpers: tuple[str, ...]) -> harness.Student:
        if self._with_course_failed is not None:
            raise self._with_course_failed
        try:
            return self._with_course_student(helpers)
        except Exception as exc:
            self._with_course_failed = exc
            raise

    def _with_course_student(self, helpers: tuple[str, ...]) -> harness.Student:
        if self._with_course is None:
            reference = course_graders.reference(self.course)
            source = "import numpy as np\n\n" + "\n\n".join(
                inspect.getsource(getattr(reference, h)) for h in helpers
            )
            calls = [c for c in self.calls if c.function not in helpers]
            run = self._run([*self.program, ("course_helpers", source)], calls)
            self._with_course = harness.Student(run.outcomes)
        return self._with_course

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
            retry = dict(args, student=self.with_course_helpers(helpers))
            try:
                fn(**retry)
            except harness.Fail:
                pass
            else:
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
