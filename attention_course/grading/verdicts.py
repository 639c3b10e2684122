"""What one grader test found, and how it is said: the failing cases, the one shown, what the
failure follows from, and the message and record of the report.

A test is checked on each case of its families (`check`); its failures keep the case and the
Fail. The failure shown is the smallest case's, shrunk further by the session where it was
drawn; a failure of the call itself (it raised, ran too long) that an earlier test of the same
function met already is said once, there: this test "follows from" that one (`consequences`).
The message states the property, the input it fails on, and the misconception that explains
it when exactly one does (diagnosis.py); never an expected value.

Where this stands on a submission's way (docs/life-of-a-submission.md): inside a Session
(session.py): each property test checked on its cases against the first run's outcomes
(`check`), said once (`consequences`), and turned into the records (`record`) of the report
grade_file reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from attention_course.grading import harness
from attention_course.grading.draws import Case, show
from attention_course.sandbox.program import Outcome

Context = tuple[str, ...]  # the functions a program run computed outside (): the student's own


@dataclass(frozen=True)
class GraderTest:
    """One test of a grader file: its points, its parameters, the families it is checked on
    (None: a test that reads the student's outcomes itself), and its file's cases."""

    function: str
    name: str
    fn: Callable[..., Any]
    points: float
    params: tuple[str, ...]
    over: tuple[str, ...] | None
    cases: dict[str, list[Case]] = field(default_factory=dict, compare=False, hash=False)

    @property
    def description(self) -> str:
        return description(self.fn)

    def checked_cases(self) -> list[Case]:
        return [c for family in self.over or () for c in self.cases.get(family, [])]


def description(fn: Callable[..., Any]) -> str:
    """A test's description: the first paragraph of its docstring, on one line."""
    doc = str(fn.__doc__ or getattr(fn, "__name__", "")).strip()
    return " ".join(doc.split("\n\n")[0].split())


@dataclass
class Failure:
    case: Case | None  # None: a test that reads outcomes itself and named no case
    fail: harness.Fail
    outcome: Outcome | None = None  # the case's call's outcome, for a failure of the call

    @property
    def size(self) -> int:
        if self.case is None:
            return 0
        if self.case.point is not None:
            return self.case.point.size
        return _elements(self.case)

    def signature(self) -> tuple[str, ...] | None:
        """What a failure of the call is, whatever the input: its kind and its error's words
        without numbers (None for a failure of the property)."""
        if not self.fail.of_call or self.outcome is None:
            return None
        words = re.sub(r"\d+", "#", self.outcome.error_message)
        return (self.outcome.status, self.outcome.error_type, words, self.outcome.detail)


def _elements(case: Case) -> int:
    return sum(int(getattr(a, "size", 1)) for a in (*case.args, *case.kwargs.values()))


@dataclass
class Verdict:
    test: GraderTest
    failures: list[Failure] = field(default_factory=list)
    context: Context = ()  # the run its failures were found in
    shown: Failure | None = None
    shrunk_from: int | None = None  # the shown case's size before shrinking
    diagnosis: Any = None  # a diagnosis.Model or diagnosis.Behaviour
    follows: GraderTest | None = None
    forgiven: bool = False  # failed with the student's callees only (session.py)
    message: str = ""

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def final(self) -> bool:
        return any(f.fail.final for f in self.failures)


Checker = Callable[[GraderTest, Case, harness.Student], harness.Fail | None]


def check_case(test: GraderTest, case: Case, student: harness.Student) -> harness.Fail | None:
    """The Fail of `test` on `case` with `student`'s outcomes, or None when it holds. Anything
    else the test raises is a fault of grading and goes on up."""
    args: dict[str, Any] = {}
    if "case" in test.params:
        args["case"] = case
    if "student" in test.params:
        args["student"] = student
    if "outcome" in test.params:
        args["outcome"] = student.outcome(case)
    try:
        if "got" in test.params:
            args["got"] = student.value(case)
        test.fn(**args)
    except harness.Fail as fail:
        return fail
    return None


def check(test: GraderTest, student: harness.Student) -> list[Failure]:
    """Every failure of a property test on its cases (all of them: the smallest is shown, and
    every one is evidence), stopping at a final one (not implemented: nothing more to say)."""
    failures = []
    for case in test.checked_cases():
        fail = check_case(test, case, student)
        if fail is not None:
            failures.append(Failure(case, fail, fail.outcome))
            if fail.final:
                break
    return failures


def same_kind(a: Failure, b: Failure) -> bool:
    """Whether a shrunk case fails as the original did: the call's same failure, or the
    property's."""
    if a.fail.of_call != b.fail.of_call:
        return False
    return a.signature() == b.signature()


def smallest(failures: Sequence[Failure]) -> Failure:
    """The failure to show: a drawn case's smallest, else the first."""
    return min(failures, key=lambda f: f.size if f.case is not None else 0)


def consequences(verdicts: Sequence[Verdict]) -> None:
    """Mark each failing test whose every failure is a failure of the call an earlier test of
    the same function met (its signature): it follows from that test, and says so once. The
    failure shown is otherwise one not met before."""
    seen: dict[tuple[str, tuple[str, ...]], GraderTest] = {}
    for v in verdicts:
        if v.passed or v.final:
            continue
        fresh = [f for f in v.failures if (v.test.function, f.signature()) not in seen]
        earlier = [
            seen[(v.test.function, sig)]
            for f in v.failures
            if (sig := f.signature()) is not None and (v.test.function, sig) in seen
        ]
        if not fresh and earlier:
            v.follows = earlier[0]
        elif v.shown is None or v.shown not in fresh:
            v.shown = smallest(fresh)
        for f in v.failures:
            if (sig := f.signature()) is not None:
                seen.setdefault((v.test.function, sig), v.test)


def indent(text: str) -> str:
    """Continuation lines of a message indented under its first (as feedback prints it)."""
    return text.replace("\n", "\n  ")


def render(v: Verdict) -> str:
    """The message of a failing test."""
    if v.passed:
        return ""
    if v.final:
        return str(next(f.fail for f in v.failures if f.fail.final))
    if v.follows is not None:
        f = v.failures[0]
        if f.outcome is None:
            why = str(f.fail)
        elif f.outcome.status == "error":
            why = f"{v.test.function} raised {f.outcome.error_type}"
        else:
            why = f"{v.test.function} {f.outcome.describe()}"
        return (
            f"Not judged on its own: {why} here too, the failure told under "
            f'"{v.follows.description}" above.'
        )
    shown = v.shown or v.failures[0]
    lines = [str(shown.fail).strip()]
    if shown.case is not None:
        label = "Smallest failing input found" if v.shrunk_from else "Failing input"
        lines.append(f"{label}: {show(shown.case)}")
    if v.diagnosis is not None:
        lines.append(v.diagnosis.text())
    return "\n".join(lines)


def record(v: Verdict) -> dict[str, Any]:
    """One line of the report."""
    shown = v.shown or (v.failures[0] if v.failures else None)
    example = None
    if not v.passed and shown is not None and shown.case is not None and v.follows is None:
        example = {
            "input": show(shown.case),
            "size": shown.size,
            "shrunk": v.shrunk_from is not None,
        }
    return {
        "function": v.test.function,
        "test": v.test.name,
        "description": v.test.description,
        "points": v.test.points,
        "passed": v.passed,
        "message": v.message,
        "diagnosis": getattr(v.diagnosis, "label", None),
        "follows_from": v.follows.name if v.follows is not None else None,
        "counterexample": example,
    }
