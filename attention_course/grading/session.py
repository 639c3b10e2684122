"""One grading session, as pytest (pytest_plugin.py) and the grading jobs (runner.py) both run it.

A session runs the submission's program once in the sandbox, with every call of the collected
grader files' cases, then checks each test's property on each of its cases (verdicts.py). Only
the grader's own `Fail` is a student outcome; anything else a test raises is a fault of grading.
A program run that failed is not run again for the next test (its fault is the next test's too),
and every program run of the session shares the submission's one absolute deadline: however many
tests there are, grading one submission ends within its time.

Then, for the tests that failed:

1. **Charged once.** A graded function may call every other function of its notebook (the
   exercise contract): the ones graded there, and the helpers the student pastes from an earlier
   assignment (course.toml). A failing test of a function whose code names any of them is run
   again on a second program run of the student's cells in which each of them (never the
   function itself) is computed outside: every call the student's code makes of it goes out over
   the wire to this process, which computes the course's (the reference) and sends the value
   back (sandbox/program.py `outside`). No code or source of the reference is in the sandbox. If
   the test passes there, it counts as passed only if the student's own functions really give
   other values on the calls that test's calls made of them: those calls are asked of the
   student's own functions (a run of its cells, as the first) and compared with the reference's
   at the graders' tolerance (`harness.same_value`); where they all agree, the second run proves
   nothing and the failure stands. Those calls are the student's code's choice, so a difference
   there counts only for a function that also gives other values than the course's on the
   graders' own inputs for it (its cases, drawn for this submission): code that tells the runs
   apart and shows a difference on an input of its choosing gains nothing, and a function
   charged this way always costs points where it is graded. A test that counts is noted, for
   each function that differed:
   the bug costs points in that function's own tests only, and a 0-point line of the caller
   names it. A test that fails in both runs is the function's own failure, judged on the second
   run (its callees' bugs taken out).
2. **Said once.** A failure of the call itself that an earlier test of the same function met
   already follows from that test (verdicts.py).
3. **Shrunk.** A failing drawn case is made smaller and simpler (draws.py `smaller`), a few
   rounds, each round's candidates of every test in one more program run; the smallest that
   still fails the same way is shown.
4. **Diagnosed.** The misconception models of the course (diagnosis.py) are run on the failing
   test's calls; the one that explains them is named.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from attention_course.course import Course
from attention_course.grading import course_graders, diagnosis, harness
from attention_course.grading.draws import SMALL_ENOUGH, Case, Draw
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
from attention_course.sandbox.program import Call, Outcome, OutsideCall, ProgramRun

HELPER_NOTE = "passed_only_with_course"  # the parameter of the 0-point test that names a helper
CALLEE_NOTE = "passed_only_with_callees"  # ... and of one that names a graded function it calls
NOTES = (HELPER_NOTE, CALLEE_NOTE)
CHARGED_ONCE = "test_same_with_your_other_functions"  # the 0-point line that names a callee
# What the student's code raises in the second run where the course's function it calls refuses
# the arguments it is given (sandbox/inside/worker.py): the first run says more of that failure.
OUTSIDE_ERROR = "OutsideError"
SHRINK_ROUNDS = 1  # program runs (per run context) spent making counterexamples smaller
SHRINK_CANDIDATES = 16  # tried per failing test and round


class _Reading(harness.Student):
    """A Student that notes which calls a test reads."""

    def __init__(self, outcomes: dict[str, Outcome]):
        super().__init__(outcomes)
        self.read: list[str] = []

    def outcome(self, c: Any) -> Outcome:
        self.read.append(harness._call_of(c).key)
        return super().outcome(c)


def names_used(program: list[tuple[str, str]], function: str) -> set[str] | None:
    """The names `function`'s code in `program` uses, following the program's own functions
    and module-level names it uses (None when the program cannot be read: assume any)."""
    defs: dict[str, list[ast.AST]] = {}
    for _, source in program:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs.setdefault(node.name, []).append(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            defs.setdefault(n.id, []).append(node)
    used: set[str] = set()
    todo = [function]
    while todo:
        name = todo.pop()
        for made in defs.get(name, []):
            body: list[ast.AST] = (
                list(made.body)
                if isinstance(made, (ast.FunctionDef, ast.AsyncFunctionDef))
                else [made]
            )
            for part in body:
                for n in ast.walk(part):
                    ident = n.id if isinstance(n, ast.Name) else getattr(n, "attr", None)
                    if isinstance(ident, str) and ident not in used:
                        used.add(ident)
                        if ident != function:
                            todo.append(ident)
    return used


class Session:
    """The outcomes of one submission's program, and what grading learned on the way."""

    def __init__(
        self,
        program: list[tuple[str, str]],
        calls: list[Call],
        run: Callable[..., ProgramRun],
        course: Course,
        draw: Draw | None = None,
        cases_of: Callable[[str], list[Call]] | None = None,
    ):
        """`cases_of(function)`: the calls of that function's grader cases for this submission
        (for the functions not graded in this session; None: only those of `calls`)."""
        self.course = course
        self.program = program
        self.calls = calls
        self.draw = draw
        self._given_run = run
        self._could_not_run: Exception | None = None  # a run that could not be made at all
        self._program_run: ProgramRun | None = None
        self._failed: Exception | None = None  # why the program could not be run
        self._second: dict[Context, ProgramRun] = {}  # by the functions given outside
        self._second_failed: dict[Context, Exception] = {}
        self._own: dict[Context, list[Outcome]] = {}  # the student's, per outside call
        # every outcome known, by the run context it came from (shrinking adds to them)
        self._outcomes: dict[Context, dict[str, Outcome]] = {}
        self.passed_only_with_course: dict[str, list[str]] = {}  # function -> test descriptions
        # function -> graded function it calls -> descriptions of the tests that passed only
        # with the course's
        self.passed_only_with_callees: dict[str, dict[str, list[str]]] = {}
        self._diagnoser: diagnosis.Diagnoser | None = None
        self._unfinished: dict[str, bool] = {}
        self._cases_of = cases_of
        self._wrong_on_own: dict[str, bool] = {}

    # ------------------------------------------------------------------ program runs

    def _run(self, *args: Any, **kwargs: Any) -> ProgramRun:
        """One program run; once one could not be made (no worker, no sandbox, the deadline
        spent), no other is tried: each later one fails at once with the same reason."""
        if self._could_not_run is not None:
            raise self._could_not_run
        try:
            return self._given_run(*args, **kwargs)
        except Exception as exc:
            self._could_not_run = exc
            raise

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
            self._outcomes[()] = dict(self._program_run.outcomes)
        return self._program_run

    @property
    def student(self) -> harness.Student:
        return harness.Student(self.program_run.outcomes)

    def outside_of(self, function: str) -> Context:
        """What the second run of `function`'s tests computes outside: every other function of
        its notebook (the contract lets it call each), unless the contract names fewer; never
        `function` itself."""
        allowed = set(self.course.notebook_of(function))
        spec = course_graders.contract(self.course).functions.get(function)
        if spec is not None and spec.may_call is not None:
            allowed &= set(spec.may_call)
        return tuple(sorted(allowed - {function}))

    def called_by(self, function: str) -> Context:
        """The functions of `outside_of(function)` its code names (directly, or through the
        program's own helpers): only they can change its results."""
        names = self.outside_of(function)
        used = names_used(self.program, function)
        return names if used is None else tuple(n for n in names if n in used)

    def with_course_functions(self, names: Context, calls: list[Call] | None = None) -> ProgramRun:
        """A second program run: the student's cells, each of `names` computed outside by the
        course's reference, making `calls` (default: every call of the session but those of
        `names`); one run per set of names and session."""
        if names in self._second_failed:
            raise self._second_failed[names]
        try:
            if names not in self._second:
                wanted = [
                    c for c in (self.calls if calls is None else calls) if c.function not in names
                ]
                self._second[names] = run = self._run(
                    self.program, wanted, outside=self._outside(names)
                )
                self._outcomes[names] = dict(run.outcomes)
            return self._second[names]
        except Exception as exc:
            self._second_failed[names] = exc
            raise

    def _outside(self, names: Context) -> dict[str, Callable[..., Any]]:
        reference = course_graders.reference(self.course)
        return {name: getattr(reference, name) for name in names}

    def differing(self, names: Context, keys: list[str]) -> set[str]:
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
        return {f for f in found if self.wrong_on_its_own_inputs(f)}

    def wrong_on_its_own_inputs(self, function: str) -> bool:
        """Whether the student's `function` gives other values than the course's on some of
        the graders' own inputs for it (its cases for this submission: the session's calls of
        it, else `cases_of`), which the student's code does not choose: an error where the
        course's gives a value, a value where the course's raises, or another value."""
        if function not in self._wrong_on_own:
            reference: Callable[..., Any] | None = getattr(
                course_graders.reference(self.course), function, None
            )
            calls = [c for c in self.calls if c.function == function]
            outcomes: dict[str, Outcome] = {}
            if calls:
                outcomes = self.program_run.outcomes
            elif self._cases_of is not None:
                calls = [c for c in self._cases_of(function) if c.function == function]
                if calls:
                    outcomes = self._run(self.program, calls).outcomes
            self._wrong_on_own[function] = reference is not None and any(
                _differs(outcomes[c.key], diagnosis.outcome_of(reference, c)) for c in calls
            )
        return self._wrong_on_own[function]

    def _asked(self, names: Context) -> list[OutsideCall]:
        return [o for calls in self._second[names].outside_calls.values() for o in calls]

    def _own_values(self, names: Context) -> list[Outcome]:
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

    def _more(self, context: Context, calls: list[Call]) -> bool:
        """One more program run of `calls` in `context` (for shrinking); False when it cannot
        be made (the deadline, a worker that does not start): shrinking then stops there."""
        try:
            outside = self._outside(context) if context else None
            run = self._run(self.program, calls, outside=outside)
        except (RuntimeError, OSError):  # no worker, no sandbox (SandboxError, ...): stop here
            return False
        self._outcomes.setdefault(context, {}).update(run.outcomes)
        return True

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
        self._retry([found[i] for i in sorted(found)], faults)
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
                records += self._charged_once(v.test.function)
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

    def _retry(self, verdicts: list[Verdict], faults: list[str]) -> None:
        """The failing tests of each function whose code names others of its notebook, judged
        again on one second run of that function (with the calls of those tests only): passed
        and noted where the course's callees make them pass and the student's give other
        values; else judged on that run where the student's code called them there."""
        failing: dict[str, list[Verdict]] = {}
        for v in verdicts:
            if v.failures and not v.final:
                failing.setdefault(v.test.function, []).append(v)
        for function, mine in failing.items():
            names = self.called_by(function)
            if not names:
                continue
            calls = {
                c.key: c for v in mine for case in v.test.checked_cases() for c in case.calls()
            }
            try:
                run = self.with_course_functions(names, list(calls.values()))
                for v in mine:
                    self._judge_again(v, names, run)
            except Exception as exc:  # no second run: a fault of grading, as in the first
                text = str(exc).strip().splitlines()
                faults.append(f"{function}: {type(exc).__name__}: {text[0] if text else ''}"[:500])

    def _judge_again(self, v: Verdict, names: Context, run: ProgramRun) -> None:
        retry = _Reading(run.outcomes)
        again = check(v.test, retry)
        if not again:
            differ = self.differing(names, retry.read)
            if differ:
                self._note(v.test.function, v.test.description, differ)
                v.failures, v.shown, v.context, v.forgiven = [], None, names, True
            return
        keys = [call.key for case in v.test.checked_cases() for call in case.calls()]
        refused = any(
            f.outcome is not None and f.outcome.error_type == OUTSIDE_ERROR for f in again
        )
        if any(run.outside_calls.get(k) for k in keys) and not refused:
            # its own failure, its callees' bugs taken out
            v.failures, v.shown, v.context = again, smallest(again), names

    def judge(self, test: GraderTest) -> Verdict:
        """`test`'s verdict alone (its own second run where it needs one): for a test that
        reads the student's outcomes itself, or a look at one test."""
        if test.over is None:
            return self._judge_reader(test)
        v = self._first(test)
        faults: list[str] = []
        self._retry([v], faults)
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

    def _note(self, function: str, test: str, differ: set[str]) -> None:
        """Note `test` of `function` as passed only with the course's `differ`."""
        helpers = set(self.course.helpers_of(function))
        if differ & helpers:
            self.passed_only_with_course.setdefault(function, []).append(test)
        for callee in sorted(differ - helpers):
            found = self.passed_only_with_callees.setdefault(function, {})
            found.setdefault(callee, []).append(test)

    def _charged_once(self, function: str) -> list[dict[str, Any]]:
        """The 0-point line of `function` that names each graded function whose bug cost it
        nothing (a PASS where none did): every graded function may call the others of its
        notebook, so every one has it."""
        found = self.passed_only_with_callees.get(function, {})
        graded = self.course.graded_with(function)
        said = []
        for callee, tests in sorted(found.items()):
            where = "above" if graded.index(callee) < graded.index(function) else "below"
            said.append(
                f"These tests of {function} fail because {callee}, graded {where}, gives other "
                f"results than the course's on the inputs {function} gives it: "
                f"{'; '.join(tests)}. With the course's {callee} they pass, so they count as "
                f"passed here: the bug is {callee}'s and costs points in {callee}'s own tests "
                f"only. Fix {callee}."
            )
        return [
            {
                "function": function,
                "test": CHARGED_ONCE,
                "description": "(0 points) a bug in another graded function it calls costs no "
                "points here",
                "points": 0.0,
                "passed": not found,
                "message": " ".join(said),
                "diagnosis": None,
                "follows_from": None,
                "counterexample": None,
                "charged_to": sorted(found),
            }
        ]

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
                ctx: self._more(ctx, list({c.key: c for c in calls}.values()))
                for ctx, calls in by_context.items()
                if calls
            }
            improved = []
            for i, v in enumerate(pending):
                if not made.get(v.context):
                    continue
                student = harness.Student(self._outcomes[v.context])
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
        outcomes = self._outcomes.get(context, {})
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


def _differs(got: Outcome, want: Outcome) -> bool:
    """Whether the student's outcome of a call is not the course's: an error where the course's
    gives a value, a value where it raises, or another value at the graders' tolerance."""
    if want.status != "ok":
        return got.status == "ok"
    return got.status != "ok" or not harness.same_value(got.value, want.value)


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
    run = session._program_run if session is not None else None
    return {
        "faults": faults,
        "tests": tests,
        "cell_errors": [vars(c) for c in run.cell_errors] if run else [],
        "notes": run.notes if run else [],
        "workers": run.workers if run else 0,
    }


__all__ = ["CALLEE_NOTE", "HELPER_NOTE", "NOTES", "Session", "description", "report"]
