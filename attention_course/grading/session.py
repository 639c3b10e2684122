"""One grading session, as pytest (pytest_plugin.py) and the grading jobs (runner.py) both run it.

Where this stands on a submission's way (docs/life-of-a-submission.md): `runner.grade` (or the
pytest plugin) collects the grader files' tests and their cases drawn with the submission's
seeded source, and hands them to a `Session`, whose records become the report that
`graders.grade_file` reads.

A session runs the submission's program once in the sandbox (the **first run**, runs.py), with
every call of the collected grader files' cases, then checks each test's property on each of its
cases (verdicts.py). Only the grader's own `Fail` is a student outcome; anything else a test
raises is a fault of grading. A program run that failed is not run again for the next test (its
fault is the next test's too), and every program run of the session shares the submission's one
absolute deadline: however many tests there are, grading one submission ends within its time.

Then, for the tests that failed:

1. **Charged once** (blame.py). A failing test of a function whose code names others of its
   notebook is judged again on a **second run** in which they are computed outside by the
   course's reference; it is spared where the course's make it pass and the student's own
   (the **replay**) give other values, and judged on the second run where it fails there too.
   A spared test's 0-point line names the callee whose bug it is.
2. **Said once.** A failure of the call itself that an earlier test of the same function met
   already follows from that test (verdicts.py).
3. **Shrunk.** A failing drawn case is made smaller and simpler (draws.py `smaller`), a few
   rounds, each round's candidates of every test in one more program run; the smallest that
   still fails the same way is shown.
4. **Diagnosed.** The misconception models of the course (diagnosis.py) are run on the failing
   test's calls; the one that explains them is named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from attention_course.course import Course
from attention_course.grading import course_graders, diagnosis, harness
from attention_course.grading.blame import CHARGED_ONCE, Blame
from attention_course.grading.draws import SMALL_ENOUGH, Case, Draw
from attention_course.grading.runs import Runs
from attention_course.grading.verdicts import (
    Context,
    Failure,
    GraderTest,
    Verdict,
    check,
    check_case,
    consequences,
    description,
    record,
    render,
    same_kind,
    smallest,
)
from attention_course.sandbox.program import Call, Outcome, ProgramRun

HELPER_NOTE = "passed_only_with_course"  # the parameter of the 0-point test that names a helper
CALLEE_NOTE = "passed_only_with_callees"  # ... and of one that names a graded function it calls
NOTES = (HELPER_NOTE, CALLEE_NOTE)
SHRINK_ROUNDS = 1  # program runs (per run context) spent making counterexamples smaller
SHRINK_CANDIDATES = 16  # tried per failing test and round


class Session:
    """The outcomes of one submission's program, and what grading learned on the way: its named
    program runs (`runs`, runs.py) and the blame of its failing tests (`blame`, blame.py)."""

    def __init__(
        self,
        program: list[tuple[str, str]],
        calls: list[Call],
        run: Callable[..., ProgramRun],
        course: Course,
        draw: Draw | None = None,
        cases_of: Callable[[str], list[Call]] | None = None,
    ):
        """`run(program, calls, outside=None)`: one program run in the sandbox (sharing the
        submission's deadline). `draw`: the submission's seeded source, for shrinking.
        `cases_of(function)`: the calls of that function's grader cases for this submission
        (for the functions not graded in this session; None: only those of `calls`)."""
        self.course = course
        self.program = program
        self.calls = calls
        self.draw = draw
        self.runs = Runs(program, calls, run, self._outside)
        self.blame = Blame(course, self.runs, cases_of)
        self._diagnoser: diagnosis.Diagnoser | None = None
        self._unfinished: dict[str, bool] = {}

    @property
    def program_run(self) -> ProgramRun:
        """The first run (runs.py)."""
        return self.runs.first()

    @property
    def student(self) -> harness.Student:
        return harness.Student(self.program_run.outcomes)

    def called_by(self, function: str) -> Context:
        """The functions of its notebook `function`'s code names (blame.py)."""
        return self.blame.called_by(function)

    def with_course_functions(self, names: Context, calls: list[Call] | None = None) -> ProgramRun:
        """The second run of `names`, each computed outside by the course (runs.py)."""
        return self.runs.second(names, calls)

    @property
    def passed_only_with_course(self) -> dict[str, list[str]]:
        return self.blame.passed_only_with_course

    @property
    def passed_only_with_callees(self) -> dict[str, dict[str, list[str]]]:
        return self.blame.passed_only_with_callees

    def _outside(self, names: Context) -> dict[str, Callable[..., Any]]:
        reference = course_graders.reference(self.course)
        return {name: getattr(reference, name) for name in names}

    # ------------------------------------------------------------------ grading

    def grade(self, tests: list[GraderTest], faults: list[str]) -> list[dict[str, Any]]:
        """Every test, then the failures judged again with the course's callees, shrunk, said
        once and diagnosed: one record per test, in order, and every function's 0-point line
        naming the callees whose bugs it was spared. A test raising anything but a Fail adds
        a fault and counts as failed."""
        found: dict[int, Verdict] = {}

        def guarded(i: int, judge: Callable[[GraderTest], Verdict]) -> None:
            t = tests[i]
            try:
                found[i] = judge(t)
            except Exception as exc:
                text = str(exc).strip().splitlines()
                faults.append(
                    f"{t.function}::{t.name}: {type(exc).__name__}: {text[0] if text else ''}"[:500]
                )
                found[i] = Verdict(t, [Failure(None, harness.Fail("could not check"))])

        readers = [i for i, t in enumerate(tests) if t.over is None]
        for i, t in enumerate(tests):
            if t.over is not None:
                guarded(i, self._first)
        self.blame.retry([found[i] for i in sorted(found)], faults)
        for i in readers:  # they read what the retries noted
            guarded(i, self._judge_reader)
        verdicts = [found[i] for i in range(len(tests))]
        consequences(verdicts)
        try:
            self._shrink(
                [v for v in verdicts if not v.passed and not v.final and v.follows is None]
            )
            for v in verdicts:
                if not v.passed and not v.final and v.follows is None:
                    v.diagnosis = self._diagnose(v)
        except Exception as exc:  # a model or a shrink that raised: a fault of grading
            text = str(exc).strip().splitlines()
            faults.append(f"diagnosis: {type(exc).__name__}: {text[0] if text else ''}"[:500])
        records = []
        for v in verdicts:
            v.message = render(v)
            records.append(record(v))
            if v.test is _last_of(tests, v.test.function):
                records += self.blame.charged_once(v.test.function)
        return records

    def _first(self, test: GraderTest) -> Verdict:
        """`test`'s failures with the student's own functions (the first program run)."""
        if self.unfinished(test.function):
            fail = harness.NotImplementedYet(
                f"{test.function} returns one value everywhere, whatever its input: it looks "
                "unfinished"
            )
            return Verdict(test, [Failure(None, fail)])
        failures = check(test, self.student)
        return Verdict(test, failures, (), smallest(failures) if failures else None)

    def judge(self, test: GraderTest) -> Verdict:
        """`test`'s verdict alone (its own second run where it needs one): for a test that
        reads the student's outcomes itself, or a look at one test."""
        if test.over is None:
            return self._judge_reader(test)
        v = self._first(test)
        faults: list[str] = []
        self.blame.retry([v], faults)
        if faults:
            raise RuntimeError(faults[0])
        return v

    def unfinished(self, function: str) -> bool:
        """Whether `function` returns one value everywhere (zeros of the right shape, say) on
        every call, where the course's result varies on some: a placeholder, not an answer,
        which no relation between its results (a batch and its slices) may earn points for."""
        if function not in self._unfinished:
            outcomes = self.program_run.outcomes
            calls = [c for c in self.calls if c.function == function]
            done = [(c, outcomes[c.key]) for c in calls if outcomes[c.key].status == "ok"]
            arrays = [a for _, o in done for a in _arrays(o.value)]
            found = False
            if done and arrays and all(_one_value(a) for a in arrays):
                reference = getattr(course_graders.reference(self.course), function, None)
                found = reference is not None and any(
                    not all(
                        _one_value(a) for a in _arrays(diagnosis.outcome_of(reference, c).value)
                    )
                    for c, _ in done
                )
            self._unfinished[function] = found
        return self._unfinished[function]

    def _judge_reader(self, test: GraderTest) -> Verdict:
        """A test that reads the student's outcomes itself (and the notes of forgiven tests)."""
        args: dict[str, Any] = {}
        if "student" in test.params:
            args["student"] = self.student
        if "inputs" in test.params:
            args["inputs"] = test.cases
        if HELPER_NOTE in test.params:
            args[HELPER_NOTE] = self.passed_only_with_course.get(test.function, [])
        if CALLEE_NOTE in test.params:
            args[CALLEE_NOTE] = self.passed_only_with_callees.get(test.function, {})
        try:
            test.fn(**args)
        except harness.Fail as fail:
            # the first case it names is shown, every one is evidence for the diagnosis
            cases = {id(c): c for c in fail.cases}.values()
            failures = [Failure(c, fail, fail.outcome) for c in cases]
            failures = failures or [Failure(None, fail, fail.outcome)]
            return Verdict(test, failures, (), failures[0])
        return Verdict(test)

    # ------------------------------------------------------------------ shrinking

    def _shrink(self, verdicts: list[Verdict]) -> None:
        """Make the shown failure of each drawn case smaller, round by round: each round's
        candidates of every test (per run context) in one program run, the smallest that still
        fails the same way kept."""
        if self.draw is None:
            return
        pending = [
            v
            for v in verdicts
            if v.shown is not None and v.shown.case is not None and _worth_shrinking(v.shown.case)
        ]
        for round_ in range(SHRINK_ROUNDS):
            tried: dict[int, list[Case]] = {}
            by_context: dict[Context, list[Call]] = {}
            for i, v in enumerate(pending):
                assert v.shown is not None and v.shown.case is not None
                key = f"{v.shown.case.key}~{round_}"
                found = self.draw.smaller(v.shown.case, key)[:SHRINK_CANDIDATES]
                tried[i] = found
                by_context.setdefault(v.context, []).extend(
                    c for case in found for c in case.calls()
                )
            made = {  # (tests that show one case ask for its candidates once)
                ctx: self.runs.more(ctx, list({c.key: c for c in calls}.values()))
                for ctx, calls in by_context.items()
                if calls
            }
            improved = []
            for i, v in enumerate(pending):
                if not made.get(v.context):
                    continue
                student = harness.Student(self.runs.outcomes[v.context])
                best = v.shown
                assert best is not None
                for case in tried[i]:
                    fail = check_case(v.test, case, student)
                    if fail is None:
                        continue
                    candidate = Failure(case, fail, fail.outcome)
                    if same_kind(candidate, v.shown) and candidate.size < best.size:  # type: ignore[arg-type]
                        best = candidate
                if best is not v.shown:
                    v.shrunk_from = v.shrunk_from or v.shown.size  # type: ignore[union-attr]
                    v.failures.append(best)
                    v.shown = best
                    improved.append(v)
            pending = improved
            if not pending:
                return

    # ------------------------------------------------------------------ diagnosing

    @property
    def diagnoser(self) -> diagnosis.Diagnoser:
        if self._diagnoser is None:
            models = course_graders.misconceptions(self.course)
            reference = course_graders.reference(self.course)
            functions = {c.function for c in self.calls}
            self._diagnoser = diagnosis.Diagnoser(
                models, {f: getattr(reference, f) for f in functions if hasattr(reference, f)}
            )
        return self._diagnoser

    def _evidence(self, cases: Iterable[Case], context: Context) -> diagnosis.Evidence:
        """Every call of `cases` with its outcome in `context` and the reference's."""
        outcomes = self.runs.outcomes.get(context, {})
        evidence = diagnosis.Evidence()
        for case in {id(c): c for c in cases}.values():
            for call in case.calls():
                if call.key in outcomes and call.function in self.diagnoser.reference:
                    evidence.add(call, outcomes[call.key], self.diagnoser.reference_outcome(call))
        return evidence

    def _diagnose(self, v: Verdict) -> Any:
        """The misconception (or built-in mistake) that explains `v`'s failures, or None. Where
        several explain the test's own calls, the one that also explains every call the grader
        file makes of the same functions is named, if exactly one does."""
        cases = [*v.test.checked_cases(), *(f.case for f in v.failures if f.case is not None)]
        evidence = self._evidence(cases, v.context)
        failing = evidence.failing
        if not failing:
            return None
        told = {
            diagnosis.behaviour(c, evidence.student[c.key], self._twin(c, evidence))
            for c in failing
        }
        if len(told) == 1 and None not in told:
            return told.pop()
        explaining = self.diagnoser.explaining(evidence)
        if len(explaining) > 1:  # every call of the failing functions the file makes
            functions = {c.function for c in failing}
            others = [
                c for family in v.test.cases.values() for c in family if c.function in functions
            ]
            wide = self._evidence([*cases, *others], v.context)
            explaining = [m for m in explaining if self.diagnoser.explains(m, wide)]
        return explaining[0] if len(explaining) == 1 else None

    @staticmethod
    def _twin(call: Call, evidence: diagnosis.Evidence) -> Outcome | None:
        """The outcome of the same call with writable inputs, where the test made one."""
        if not call.readonly:
            return None
        for other in evidence.calls:
            if (
                not other.readonly
                and other.function == call.function
                and len(other.args) == len(call.args)
                and all(a is b for a, b in zip(other.args, call.args, strict=True))
                and other.kwargs.keys() == call.kwargs.keys()
                and all(other.kwargs[k] is call.kwargs[k] for k in call.kwargs)
            ):
                return evidence.student[other.key]
        return None


def _worth_shrinking(case: Case) -> bool:
    """A drawn case that is not already as small as a family's first draw (simple values, few
    entries): a case written by hand is shown as it is."""
    point = case.point if case.origin is None else case.origin[0].point
    if point is None:
        return False
    return not (point.simple and point.size <= SMALL_ENOUGH)


def _arrays(value: Any) -> list[Any]:
    """The numeric arrays in a result (an array, or a tuple or list of them)."""
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _arrays(v)]
    if isinstance(value, np.ndarray) and value.dtype != object:
        return [value]
    return []


def _one_value(a: Any) -> bool:
    """An array that holds one value everywhere (an empty or one-element array does not
    count: it holds no pattern to get wrong)."""
    flat = np.asarray(a).ravel()
    return flat.size > 1 and bool(np.all(flat == flat[0]))


def _last_of(tests: Iterable[GraderTest], function: str) -> GraderTest | None:
    found = None
    for t in tests:
        if t.function == function:
            found = t
    return found


def report(session: Session | None, tests: list[dict], faults: list[str]) -> dict:
    """The report of a session's records: its faults, and what the first run (if it was made)
    said of the notebook's cells."""
    run = session.runs.made if session is not None else None
    return {
        "faults": faults,
        "tests": tests,
        "cell_errors": [vars(c) for c in run.cell_errors] if run else [],
        "notes": run.notes if run else [],
        "workers": run.workers if run else 0,
    }


__all__ = [
    "CHARGED_ONCE",
    "CALLEE_NOTE",
    "HELPER_NOTE",
    "NOTES",
    "Session",
    "description",
    "report",
]
