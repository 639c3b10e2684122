"""The program runs of one submission's grading session, each named for what it asks.

Where this stands on a submission's way (docs/life-of-a-submission.md): a `Session` (session.py)
asks for these runs; each is one `run_program` (sandbox/program.py) of the student's cells in
the sandbox, sharing the submission's one deadline.

- **first**: the student's cells, with every call of the graders' cases; the student's own
  functions throughout. Every test is judged on it first.
- **second** (`second(names)`): the student's cells again, each function of `names` computed
  outside, by the course's reference, on this side of the wire; one per set of names. A failing
  test is judged again on it (blame.py).
- **replay** (`replay(names)`): the student's own functions on every call the student's code
  made of `names` in their second run, nothing outside; its outcomes are found by
  `replay_key(call key, i)`, the i-th call the call `call key` asked of the course.
- **own cases** (`own_cases(calls)`): the student's own functions on a callee's own cases, for
  a function the session does not grade (blame.py's `wrong_on_its_own_inputs`).
- **more** (`more(context, calls)`): a shrinking round's candidates, in the context (the names
  computed outside) its test was judged in.

Once one run cannot be made (no worker, no sandbox, the deadline spent), no other is tried:
each later one fails at once with the same reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attention_course.grading.verdicts import Context
from attention_course.sandbox.program import Call, Outcome, ProgramRun

Program = list[tuple[str, str]]  # the graded cells: (cell id, source)
Outside = Callable[[Context], dict[str, Callable[..., Any]]]  # names -> the course's functions


def replay_key(key: str, i: int) -> str:
    """The replay's call of the `i`-th call the call `key` made of the course's functions."""
    return f"own:{key}#{i}"


class Runs:
    """The named program runs of one submission (see the module's docstring), made on demand and
    kept; `outcomes[context]` is every outcome known by the context it came from (the first
    run's under `()`, shrinking adds to them)."""

    def __init__(
        self,
        program: Program,
        calls: list[Call],
        run: Callable[..., ProgramRun],
        outside: Outside,
    ):
        self.program = program
        self.calls = calls
        self._run_program = run
        self._outside = outside
        self._could_not_run: Exception | None = None  # a run that could not be made at all
        self._first: ProgramRun | None = None
        self._first_failed: Exception | None = None
        self._second: dict[Context, ProgramRun] = {}
        self._second_failed: dict[Context, Exception] = {}
        self._replay: dict[Context, dict[str, Outcome]] = {}
        self.outcomes: dict[Context, dict[str, Outcome]] = {}

    def _run(self, calls: list[Call], outside: dict[str, Callable[..., Any]] | None = None):
        if self._could_not_run is not None:
            raise self._could_not_run
        try:
            if outside is None:
                return self._run_program(self.program, calls)
            return self._run_program(self.program, calls, outside=outside)
        except Exception as exc:
            self._could_not_run = exc
            raise

    @property
    def made(self) -> ProgramRun | None:
        """The first run, if it was made (what a report says of the notebook's cells)."""
        return self._first

    def first(self) -> ProgramRun:
        """The first run: every call of the session, the student's own functions throughout."""
        if self._first is None:
            if self._first_failed is not None:
                raise self._first_failed
            try:
                self._first = self._run(self.calls)
            except Exception as exc:
                self._first_failed = exc
                raise
            self.outcomes[()] = dict(self._first.outcomes)
        return self._first

    def second(self, names: Context, calls: list[Call] | None = None) -> ProgramRun:
        """The second run of `names`: each computed outside by the course, making `calls`
        (default: every call of the session) but those of `names`; one per set of names."""
        if names in self._second_failed:
            raise self._second_failed[names]
        try:
            if names not in self._second:
                wanted = [
                    c for c in (self.calls if calls is None else calls) if c.function not in names
                ]
                self._second[names] = run = self._run(wanted, self._outside(names))
                self.outcomes[names] = dict(run.outcomes)
            return self._second[names]
        except Exception as exc:
            self._second_failed[names] = exc
            raise

    def replay(self, names: Context) -> dict[str, Outcome]:
        """The student's own functions on every call its code made of `names` in their second
        run (one more run of its cells, as the first), by `replay_key`."""
        if names not in self._replay:
            asked = self._second[names].outside_calls
            calls = [
                Call(replay_key(key, i), o.function, o.args, o.kwargs)
                for key, made in asked.items()
                for i, o in enumerate(made)
            ]
            run = self._run(calls) if calls else None
            self._replay[names] = {
                c.key: run.outcomes[c.key] if run else Outcome("skipped") for c in calls
            }
        return self._replay[names]

    def own_cases(self, calls: list[Call]) -> dict[str, Outcome]:
        """The student's own functions on `calls` (a callee's own cases), in a run of their own."""
        return self._run(calls).outcomes

    def more(self, context: Context, calls: list[Call]) -> bool:
        """One more run of `calls` in `context` (for shrinking); False when it cannot be made
        (the deadline, a worker that does not start): shrinking then stops there."""
        try:
            run = self._run(calls, self._outside(context) if context else None)
        except (RuntimeError, OSError):  # no worker, no sandbox (SandboxError, ...): stop here
            return False
        self.outcomes.setdefault(context, {}).update(run.outcomes)
        return True
