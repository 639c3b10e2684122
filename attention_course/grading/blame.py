"""Blame by cause: a failing test whose function calls others of its notebook is charged to the
function whose bug it is.

Where this stands on a submission's way (docs/life-of-a-submission.md): a `Session` (session.py)
hands its failing verdicts to `Blame.retry` after the first run, before the failures are said
once, shrunk and diagnosed.

A graded function may call every other function of its notebook (the exercise contract): the
ones graded there, and the helpers the student pastes from an earlier assignment (course.toml).
A failing test of a function whose code names any of them is judged again on the **second run**
(runs.py) of the student's cells in which each of them (never the function itself) is computed
outside: every call the student's code makes of it goes out over the wire to this process,
which computes the course's (the reference) and sends the value back (sandbox/program.py
`outside`). No code or source of the reference is in the sandbox.

- If the test passes there, it counts as passed only if the student's own functions really give
  other values on the calls that test's calls made of them: those calls are asked of the
  student's own functions (the **replay**, runs.py) and compared, call by call, by key, with the
  values the course's sent back, at the graders' tolerance (`harness.same_value`); where they
  all agree, the second run proves nothing and the failure stands. Those calls are the student's
  code's choice, so a difference there counts only for a function that also gives other values
  than the course's on the graders' own inputs for it (its cases, drawn for this submission):
  code that tells the runs apart and shows a difference on an input of its choosing gains
  nothing, and a function charged this way always costs points where it is graded. Such a test
  is **spared**: the bug costs points in the callee's own tests only, and a 0-point line of the
  caller names it (`charged_once`).
- A test that fails in both runs, where the student's code called the course's functions, is the
  function's **own** failure, judged on the second run (its callees' bugs taken out).
- Otherwise the first run's failure **stands**.

Each test judged again leaves a `Retrial` record; the notes reader tests get (which tests passed
only with the course's helpers, only with its callees) are read from them.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from attention_course.course import Course
from attention_course.grading import course_graders, diagnosis, harness
from attention_course.grading.runs import Runs, replay_key
from attention_course.grading.verdicts import Context, Verdict, check, smallest
from attention_course.sandbox.program import Call, Outcome, ProgramRun

CHARGED_ONCE = "test_same_with_your_other_functions"  # the 0-point line that names a callee
# What the student's code raises in the second run where the course's function it calls refuses
# the arguments it is given (sandbox/inside/worker.py): the first run says more of that failure.
OUTSIDE_ERROR = "OutsideError"


class Retried(enum.Enum):
    """What the second run made of a failing test."""

    SPARED = "spared"  # passed with the course's callees, whose student's values differ
    OWN = "own"  # fails with the course's callees too: judged on the second run
    STANDS = "stands"  # the first run's failure stands


@dataclass(frozen=True)
class Retrial:
    """One failing test judged again on the second run of `names`."""

    function: str
    test: str  # its description
    names: Context  # the functions computed outside
    retried: Retried
    differing: tuple[str, ...] = ()  # SPARED: the callees whose student's values differ
    helpers: tuple[str, ...] = ()  # SPARED: of those, the helpers pasted from earlier work


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


class Blame:
    """The second runs' judgement of one submission's failing tests, and its records."""

    def __init__(
        self,
        course: Course,
        runs: Runs,
        cases_of: Callable[[str], list[Call]] | None = None,
    ):
        """`cases_of(function)`: the calls of that function's grader cases for this submission
        (for the functions not graded in this session; None: only those of the session)."""
        self.course = course
        self.runs = runs
        self.records: list[Retrial] = []
        self._cases_of = cases_of
        self._wrong_on_own: dict[str, bool] = {}

    # ------------------------------------------------------------------ who may be blamed

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
        used = names_used(self.runs.program, function)
        return names if used is None else tuple(n for n in names if n in used)

    # ------------------------------------------------------------------ judging again

    def retry(self, verdicts: list[Verdict], faults: list[str]) -> None:
        """The failing tests of each function whose code names others of its notebook, judged
        again on one second run of that function (with the calls of those tests only)."""
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
                run = self.runs.second(names, list(calls.values()))
                for v in mine:
                    self.records.append(self._judge_again(v, names, run))
            except Exception as exc:  # no second run: a fault of grading, as in the first
                text = str(exc).strip().splitlines()
                faults.append(f"{function}: {type(exc).__name__}: {text[0] if text else ''}"[:500])

    def _judge_again(self, v: Verdict, names: Context, run: ProgramRun) -> Retrial:
        function, test = v.test.function, v.test.description
        retry = _Reading(run.outcomes)
        again = check(v.test, retry)
        if not again:
            differ = self.differing(names, retry.read)
            if not differ:
                return Retrial(function, test, names, Retried.STANDS)
            v.failures, v.shown, v.context, v.forgiven = [], None, names, True
            helpers = set(self.course.helpers_of(function))
            return Retrial(
                function,
                test,
                names,
                Retried.SPARED,
                tuple(sorted(differ)),
                tuple(sorted(differ & helpers)),
            )
        keys = [call.key for case in v.test.checked_cases() for call in case.calls()]
        refused = any(
            f.outcome is not None and f.outcome.error_type == OUTSIDE_ERROR for f in again
        )
        if any(run.outside_calls.get(k) for k in keys) and not refused:
            # its own failure, its callees' bugs taken out
            v.failures, v.shown, v.context = again, smallest(again), names
            return Retrial(function, test, names, Retried.OWN)
        return Retrial(function, test, names, Retried.STANDS)

    def differing(self, names: Context, keys: list[str]) -> set[str]:
        """The functions of `names` whose student's own values (the replay) differ from the
        course's on the calls that the calls `keys` made of them in the second run, and that
        are wrong on their own inputs too."""
        asked = {
            replay_key(k, i): o
            for k in dict.fromkeys(keys)
            for i, o in enumerate(self.runs.second(names).outside_calls.get(k, []))
        }
        if not asked:
            return set()
        own = self.runs.replay(names)
        found = {
            o.function
            for key, o in asked.items()
            if own[key].status != "ok" or not harness.same_value(own[key].value, o.value)
        }
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
            calls = [c for c in self.runs.calls if c.function == function]
            outcomes: dict[str, Outcome] = {}
            if calls:
                outcomes = self.runs.first().outcomes
            elif self._cases_of is not None:
                calls = [c for c in self._cases_of(function) if c.function == function]
                if calls:
                    outcomes = self.runs.own_cases(calls)
            self._wrong_on_own[function] = reference is not None and any(
                differs(outcomes[c.key], diagnosis.outcome_of(reference, c)) for c in calls
            )
        return self._wrong_on_own[function]

    # ------------------------------------------------------------------ what the records say

    @property
    def passed_only_with_course(self) -> dict[str, list[str]]:
        """function -> the descriptions of its tests spared by the course's pasted helpers."""
        found: dict[str, list[str]] = {}
        for r in self.records:
            if r.retried is Retried.SPARED and r.helpers:
                found.setdefault(r.function, []).append(r.test)
        return found

    @property
    def passed_only_with_callees(self) -> dict[str, dict[str, list[str]]]:
        """function -> graded function it calls -> the descriptions of its tests that passed
        only with the course's."""
        found: dict[str, dict[str, list[str]]] = {}
        for r in self.records:
            if r.retried is Retried.SPARED:
                for callee in sorted(set(r.differing) - set(r.helpers)):
                    found.setdefault(r.function, {}).setdefault(callee, []).append(r.test)
        return found

    def charged_once(self, function: str) -> list[dict[str, Any]]:
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


def differs(got: Outcome, want: Outcome) -> bool:
    """Whether the student's outcome of a call is not the course's: an error where the course's
    gives a value, a value where it raises, or another value at the graders' tolerance."""
    if want.status != "ok":
        return got.status == "ok"
    return got.status != "ok" or not harness.same_value(got.value, want.value)
