"""Grading one submission with the hidden graders: `grade_file`, the engine's one entry.

Where this stands on a submission's way (docs/life-of-a-submission.md): `GradeOutOfKernel`
(preprocessors.py, inside nbgrader's autograde), `check`, the hub's Check service and the
Gradescope runner all call `grade_file`. It derives the submission's seed (seeds.py, here only),
grades in this process without pytest (runner.py, the default) or, for plain nbgrader and its
formgrader, in a pytest process of its own (pytest_plugin.py), reads the JSON report and turns it
into per-function scores. Neither process runs student code: that happens in the sandboxed
worker they start (sandbox/program.py).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from attention_course.course import Course, find_course
from attention_course.grading import seeds
from attention_course.sandbox import confined
from attention_course.sandbox.program import submission_deadline
from attention_course.settings import GiB

GRADER_MEMORY_BYTES = 4 * GiB  # address space of one grader (pytest) process
PR_SET_PDEATHSIG = 1


class GradingError(RuntimeError):
    """The graders themselves could not run (not the student's fault)."""


@dataclass
class TestResult:
    test: str
    description: str
    points: float
    passed: bool
    message: str
    partial: float | None = None  # points earned when not all or nothing (a quiz question)
    diagnosis: str | None = None  # the misconception its message names (diagnosis.py)
    follows_from: str | None = None  # the earlier test whose failure this one follows from
    counterexample: dict | None = None  # the input shown: {"input", "size", "shrunk"}
    charged_to: tuple[str, ...] = ()  # the functions whose bug this 0-point line names

    @property
    def earned(self) -> float:
        if self.partial is not None:
            return self.partial
        return self.points if self.passed else 0.0

    def feedback(self, hint: bool = True) -> str:
        """Its PASS/FAIL line a student can read: the property, and (`hint`) the hint when it
        failed."""
        line = f"{'PASS' if self.passed else 'FAIL'} [{self.points:g} pt] {self.description}"
        if hint and not self.passed and self.message:
            line += "\n     " + self.message.replace("\n", "\n     ")
        return line


@dataclass
class FunctionScore:
    function: str
    tests: list[TestResult] = field(default_factory=list)

    @property
    def max_score(self) -> float:
        return sum(t.points for t in self.tests)

    @property
    def score(self) -> float:
        return sum(t.earned for t in self.tests)

    def feedback(self) -> str:
        """PASS/FAIL lines a student can read: the property, and the hint when it failed."""
        return "\n".join(t.feedback() for t in self.tests)


@dataclass
class GradeReport:
    assignment: str
    functions: dict[str, FunctionScore]
    cell_errors: list[dict]
    notes: list[str]
    unsandboxed: bool = False  # graded without the sandbox, as the instructor asked
    seed: str | None = None  # the graders' inputs' seed (for the instructor, never the student)

    @property
    def score(self) -> float:
        return sum(f.score for f in self.functions.values())

    @property
    def max_score(self) -> float:
        return sum(f.max_score for f in self.functions.values())


def _grade_here(
    course: Course,
    path: Path,
    functions: list[str],
    unsandboxed: bool,
    hide,
    report_path: Path,
    deadline: float,
    seed: str | None,
) -> tuple[int, str]:
    """The graders in this process, without pytest (runner.py): imported once, by path, then
    one plain call per grader test for every submission."""
    from attention_course.grading import runner

    found = runner.grade(
        course,
        Path(path).resolve(),
        functions,
        unsandboxed,
        list(hide),
        deadline=deadline,
        seed=seed,
    )
    report_path.write_text(json.dumps(found))
    return 0, ""


def _run_graders(course: Course, args: list[str], deadline: float) -> tuple[int, str]:
    """pytest on the grader files, in a process of its own: (exit code, what it printed). It
    gets the submission's deadline as a wall-clock time, and is stopped if it outlives it."""
    epoch = time.time() + (deadline - time.monotonic())
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", *args, "--deadline", repr(epoch)],
            cwd=course.root,
            env=env,
            capture_output=True,
            text=True,
            preexec_fn=_grader_limits,
            timeout=max(deadline - time.monotonic(), 0.0) + course.limits.graders_slack,
        )
    except subprocess.TimeoutExpired:
        slack = course.limits.graders_slack
        return -1, f"the graders' process ran {slack:g} s past the submission's deadline"
    return proc.returncode, proc.stdout + proc.stderr


def limit_grader_memory() -> None:
    """The memory limit of a process that grades in process (it reads what student code
    sent back; every reply is capped, this is the last line)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > GRADER_MEMORY_BYTES:
        resource.setrlimit(resource.RLIMIT_AS, (GRADER_MEMORY_BYTES, hard))


def _grader_limits() -> None:
    """The grader process's own memory limit (it reads what student code sent back), and it
    dies with the process that started it."""
    resource.setrlimit(resource.RLIMIT_AS, (GRADER_MEMORY_BYTES, GRADER_MEMORY_BYTES))
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def grade_file(
    path: Path,
    assignment: str,
    unsandboxed: bool = False,
    functions: list[str] | None = None,
    hide: Sequence[Path] = (),
    in_process: bool = True,
    course: Course | None = None,
    seed: str | None = None,
    submitted: Path | None = None,
) -> GradeReport:
    """Grade one submission (notebook or Python file) against one assignment's graders.

    The graders run in this process without pytest (imported once and reused for every
    submission it grades: a grading job, `check`, the hub's Check service; they never run
    student code, which runs in the sandbox), or with `in_process=False` in a pytest process of
    their own: what plain nbgrader needs (GradeOutOfKernel's default), whose formgrader is a
    long-lived server that must neither keep graders the instructor has since edited nor have
    its own memory limit lowered. Both give the same report.
    `course` is the course whose graders grade it (default: the one found from the current
    folder, see course.find_course); its whole folder is hidden from the student's code.
    The graders draw their inputs with `seed`, by default the submission's own (this is the one
    place it is derived: seeds.submission_seed, from the course's grading key and the digest of
    `submitted`, the file as the student handed it in, by default `path`); the report keeps it
    (`GradeReport.seed`). Raises SandboxUnavailable when no sandbox can be made here, unless
    `unsandboxed`.
    """
    confined.require(unsandboxed)
    course = course or find_course()
    # one for the whole submission, by the clock, of the course's limits (course.toml)
    deadline = submission_deadline(course.limits)
    spec = course.assignment(assignment)
    try:
        seed = seed or seeds.submission_seed(course, assignment, Path(submitted or path))
    except (OSError, seeds.GradingKeyError) as exc:
        raise GradingError(f"no seed for the graders' inputs: {exc}") from None
    wanted = list(functions or spec.graded)
    with tempfile.TemporaryDirectory(prefix="attention-grade-") as tmp:
        report_path = Path(tmp) / "report.json"
        seed_path = Path(tmp) / "seed"  # a private folder: never on a command line, never in
        seed_path.write_text(seed + "\n")  # an environment other processes inherit
        args = [
            "-q",
            "-p",
            "no:cacheprovider",
            "--no-header",
            "-o",
            "addopts=",
            "--rootdir",
            str(course.root),
            "--course",
            str(course.root),
            *[str(spec.grader_file(f)) for f in wanted],
            "--submission",
            str(Path(path).resolve()),
            "--report",
            str(report_path),
            *(["--unsandboxed"] if unsandboxed else []),
            *[arg for folder in hide for arg in ("--hide", str(folder))],
            "--seed-file",
            str(seed_path),
        ]
        if in_process:
            code, output = _grade_here(
                course, path, wanted, unsandboxed, hide, report_path, deadline, seed
            )
        else:
            code, output = _run_graders(course, args, deadline)
        try:
            raw = json.loads(report_path.read_text())
            faults, tests = list(raw["faults"]), list(raw["tests"])
        except (OSError, ValueError, KeyError, TypeError):
            raw, faults, tests = None, [], []
        if raw is None or code not in (0, 1) or faults:
            tail = output.strip().splitlines()[-15:]
            raise GradingError(
                "the graders failed on this submission (not the student's fault): "
                + "; ".join(faults[:5] or tail[-1:] or ["no report"])
            )
    scores = {f: FunctionScore(f) for f in wanted}
    for t in tests:
        scores[t["function"]].tests.append(
            TestResult(
                t["test"],
                t["description"],
                float(t["points"]),
                bool(t["passed"]),
                t["message"],
                diagnosis=t.get("diagnosis"),
                follows_from=t.get("follows_from"),
                counterexample=t.get("counterexample"),
                charged_to=tuple(t.get("charged_to", ())),
            )
        )
    untested = [f for f, score in scores.items() if not score.tests]
    if untested:
        raise GradingError(f"no grader test ran for {', '.join(untested)}")
    return GradeReport(
        assignment, scores, raw["cell_errors"], raw["notes"], unsandboxed, seed=raw.get("seed")
    )
