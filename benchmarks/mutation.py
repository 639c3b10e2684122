"""Mutation testing of the grading core, the sandbox and the class run: do the tests notice when
the code is wrong?

cosmic-ray (https://cosmic-ray.readthedocs.io) changes one thing at a time in one module (a
comparison, an operator, a number, a boolean, an exception handler, a loop) and runs the tests
that concern that module; a mutant the tests do not fail on "survived". This script runs it
module by module, each in a copy of the repository (the repository itself is never changed),
and prints each module's score (mutants killed out of those run) and every survivor with its
diff. Changes inside type annotations are not run: with `from __future__ import annotations`
they are never evaluated, so no test could tell them apart.

    .venv/bin/python benchmarks/mutation.py --list      # modules, their tests, the groups
    .venv/bin/python benchmarks/mutation.py --count sandbox classrun   # mutants per module
    .venv/bin/python benchmarks/mutation.py attention_course/quiz/checking.py \
        attention_course/grading/graders.py
    .venv/bin/python benchmarks/mutation.py --jobs 2          # every module (hours)
    .venv/bin/python benchmarks/mutation.py --workdir DIR --recheck   # survivors again
    .venv/bin/python benchmarks/mutation.py --sample 0.25     # a seeded quarter of each module
    .venv/bin/python benchmarks/mutation.py --mutants 80 --seed S sandbox classrun
        # a seeded 80 of all their mutants together (each as likely as any other)

It is slow (one test run per mutant: minutes for a small module, about an hour for the largest),
so it is not part of the test suite: run it after changing the grading core, the sandbox, the
class run or their tests. cosmic-ray is in the dev extra (scripts/setup.sh installs it); it
is installed into this environment if it is missing.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Module -> the tests that concern it (pytest arguments): the narrowest that exercise it, the
# fastest first (a mutant is killed by the first test that fails).
FAULTS = "tests/grading/test_grading_faults.py"
SLOW_FAULT = f"--deselect {FAULTS}::test_autograde_records_no_score_and_grades_it_next_time"
MODULES: dict[str, list[str]] = {
    "attention_course/grading/graders.py": [
        "tests/grading/test_grading_report.py",
        FAULTS,
        SLOW_FAULT,
    ],
    "attention_course/grading/preprocessors.py": [
        "tests/grading/test_preprocessors.py",
        "tests/sandbox/test_hiding.py",
    ],
    "attention_course/sandbox/program.py": [
        "tests/sandbox/test_sandbox_values.py",
        "tests/sandbox/test_sandbox.py",
        "tests/sandbox/test_shared_memory.py::test_the_sealed_inputs_can_be_read_and_never_changed",
        "tests/sandbox/test_outside.py",  # functions run outside, read-only inputs
        "tests/sandbox/test_hostile.py",  # a worker that dies, loops, exits: the calls after it
    ],
    "attention_course/grading/pytest_plugin.py": [
        "grader_tests",
        FAULTS,
        SLOW_FAULT,
        "tests/grading/test_run_graders.py::test_sample_class",
    ],
    "attention_course/grading/session.py": [
        FAULTS,
        SLOW_FAULT,
        "tests/grading/test_pasted_helpers.py",
        "tests/grading/test_run_graders.py::test_sample_class",
    ],
    "attention_course/grading/runs.py": [
        FAULTS,
        SLOW_FAULT,
        "tests/grading/test_graded_callees.py",
        "tests/grading/test_pasted_helpers.py",
        "tests/grading/test_deadlines.py",
    ],
    "attention_course/grading/blame.py": [
        "tests/grading/test_graded_callees.py",
        "tests/grading/test_pasted_helpers.py",
        "tests/grading/test_run_graders.py::test_catalogue_entries",
    ],
    "attention_course/grading/runner.py": [FAULTS, SLOW_FAULT, "tests/grading/test_run_graders.py"],
    "attention_course/grading/harness.py": [
        "tests/grading/test_harness.py",
        "tests/grading/test_catalogue.py",
    ],
    "attention_course/quiz/checking.py": [
        "tests/quiz/test_quiz_questions.py",
        "tests/quiz/test_quiz_cli.py",
        "tests/quiz/test_quiz_free_text.py",
    ],
}
# The trust boundary (the sandbox) and the class run, named together as groups. Their tests
# start sandboxes, grading jobs and servers: each module gets the few that observe it directly.
SANDBOX = "tests/sandbox/test_sandbox.py"
ZYGOTE = "tests/sandbox/test_zygote.py"  # the zygote's guarantees, observed
FRAMES = [
    f"{SANDBOX}::{name}"
    for name in (
        "test_frames_round_trip",
        "test_hostile_frames_are_refused",
        "test_frames_at_the_caps_are_read",
        "test_a_cut_frame_is_a_closed_channel",
        "test_a_reply_trickled_byte_by_byte_does_not_move_the_deadline",
    )
]
NOTEBOOK = "tests/sandbox/test_notebook_execute.py"
OUTSIDE = "tests/sandbox/test_outside.py"  # a read-only input written: the worker's SIGSEGV
CGROUP_LIMITS = "tests/sandbox/test_cgroup_limits.py"
CLASS_RUN = "tests/classgrade/test_class_run.py"
SMALL_CLASS = [  # the engine's copy is run through the command: not for each mutant
    CLASS_RUN,
    f"--deselect {CLASS_RUN}::test_a_changed_engine_regrades_what_it_grades_and_nothing_else",
]
TASKS = "tests/classgrade/test_cluster_tasks.py"
FORKS = [  # the command's grading jobs, forked from it
    f"tests/classgrade/test_class_grading.py::{name}"
    for name in (
        "test_a_forked_job_ends_with_its_requests_and_a_crashed_one_says_why",
        "test_busy_jobs_die_with_the_killed_command_and_hold_nothing_of_each_other",
    )
]
SANDBOX_TESTS: dict[str, list[str]] = {
    "attention_course/sandbox/jail.py": [
        "tests/sandbox/test_jail.py",
        "tests/sandbox/test_doctor.py",
        # it binds the repository into the sandbox: bound from the copy this script grades in,
        # the worker does not start (exit 1; not yet explained), so it is left out here
        "--deselect tests/sandbox/test_doctor.py::test_a_mounted_course_fails_its_own_line",
        "tests/sandbox/test_observed.py",
        "tests/sandbox/test_hiding.py",
        "tests/sandbox/test_syscall_filter.py",
        "tests/sandbox/test_shared_memory.py",  # /dev/shm's size; the bubblewrap named
        SANDBOX,
    ],
    "attention_course/sandbox/confined.py": [
        SANDBOX,
        ZYGOTE,
        OUTSIDE,
        CGROUP_LIMITS,
        NOTEBOOK,
        "tests/sandbox/test_backups.py",
        "tests/sandbox/test_kill_uid.py",
        "tests/sandbox/test_hostile.py",
        "tests/sandbox/test_clock.py",
        # the probe of machines whose sandbox cannot start
        "tests/sandbox/test_doctor.py::"
        "test_a_bubblewrap_that_cannot_make_namespaces_is_reported_with_its_reason_and_the_fix",
        "tests/sandbox/test_doctor.py::"
        "test_a_machine_without_bubblewrap_or_setpriv_is_told_what_to_install",
        "tests/sandbox/test_doctor.py::"
        "test_a_machine_where_no_system_call_filter_can_be_built_has_no_sandbox",
        "tests/sandbox/test_doctor.py::test_a_zygote_that_cannot_start_is_a_sandbox_that_did_not_start",
    ],
    "attention_course/sandbox/safety.py": [
        "tests/sandbox/test_submission_files.py",
        "tests/sandbox/test_refusals.py",
    ],
    "attention_course/sandbox/cgroups.py": [
        "tests/sandbox/test_cgroup_v2.py",
        "tests/sandbox/test_cgroup_limits.py",
        "tests/sandbox/test_cgroups.py",
        "tests/sandbox/test_observed.py",
    ],
    "attention_course/sandbox/inside/wire.py": ["tests/sandbox/test_wire.py", *FRAMES],
    "attention_course/sandbox/zygotes.py": [
        ZYGOTE,
        SANDBOX,
        "tests/sandbox/test_backups.py",
        f"{CLASS_RUN}::test_a_job_starts_its_zygotes_before_its_first_submission",
        NOTEBOOK,  # the notebook run's own kind of zygote
        "tests/sandbox/test_clock.py::test_a_sandbox_start_never_waits_past_the_submissions_time",
    ],
    "attention_course/sandbox/inside/zygote.py": [  # every sandbox's program is forked by it
        ZYGOTE,
        "tests/sandbox/test_doctor.py",
        "--deselect tests/sandbox/test_doctor.py::test_a_mounted_course_fails_its_own_line",
        "tests/sandbox/test_observed.py",
        "tests/sandbox/test_syscall_filter.py",
        "tests/sandbox/test_backups.py",
        OUTSIDE,
        CGROUP_LIMITS,  # the child joins its sandbox's cgroup
        SANDBOX,
        NOTEBOOK,
    ],
    "attention_course/sandbox/execute.py": [
        NOTEBOOK,
        "tests/sandbox/test_backups.py",
        "tests/grading/test_notebook_run.py::test_every_kind_of_output_as_a_kernel_writes_it",
        "tests/sandbox/test_clock.py::test_a_cell_cannot_spend_more_than_the_notebooks_cpu_time",
        "tests/sandbox/test_clock.py::test_a_cell_cannot_run_past_the_notebooks_deadline",
    ],
}
CLASS_RUN_TESTS: dict[str, list[str]] = {
    "attention_course/classgrade/run.py": SMALL_CLASS,
    "attention_course/classgrade/jobs.py": [
        "tests/classgrade/test_retrying.py",
        "tests/classgrade/test_waits.py",  # whose a submission's time is (GradingJob.over)
        "tests/classgrade/test_gradebook.py::"
        "test_a_state_kept_for_later_lets_go_of_its_claims_and_keeps_its_sessions",
        *FORKS,
        TASKS,
        "tests/classgrade/test_cluster_grading.py::"
        "test_a_task_that_finds_its_submission_claimed_says_busy_and_records_nothing",
        *SMALL_CLASS,  # the local run's jobs, claims and records
    ],
    "attention_course/classgrade/job.py": [TASKS, *FORKS, *SMALL_CLASS],
    "attention_course/classgrade/cluster.py": [
        "tests/classgrade/test_cluster_words.py",
        TASKS,
        "tests/classgrade/test_cluster_grading.py::"
        "test_a_task_that_finds_its_submission_claimed_says_busy_and_records_nothing",
    ],
    "attention_course/classgrade/gradebook.py": [
        "tests/classgrade/test_gradebook.py",
        *SMALL_CLASS,  # what a run records, its claims, its retries of a row another made
    ],
    "attention_course/classgrade/gradebook_pool.py": [TASKS, *SMALL_CLASS],
    "attention_course/classgrade/waits.py": [
        "tests/classgrade/test_waits.py",  # a stalled server's wait broken, told in order
        *SMALL_CLASS,
    ],
    "attention_course/classgrade/outcomes.py": [
        "tests/classgrade/test_outcomes.py",
        "tests/classgrade/test_retrying.py",
        TASKS,
    ],
    "attention_course/integrations/gradescope_run.py": [
        "tests/integrations/test_gradescope_run.py",
        "tests/integrations/test_gradescope_layers.py",
    ],
}
# The wings mutation testing did not draw from before (issue 42): each module with the tests
# that pin its guarantees, the unit-level ones first. No explorations or samples of these groups
# are recorded yet (benchmarks/mutation-survivors.md).
GRADING_TESTS: dict[str, list[str]] = {
    "attention_course/grading/fingerprint.py": ["tests/grading/test_fingerprint.py"],
    "attention_course/grading/seeds.py": ["tests/grading/test_seeds.py"],
    "attention_course/grading/draws.py": ["tests/grading/test_draws.py"],
    "attention_course/grading/contract.py": ["tests/grading/test_contract.py"],
}
INTEGRATION_TESTS: dict[str, list[str]] = {
    "attention_course/integrations/check_limits.py": [
        "tests/integrations/test_check_limits.py",
        "tests/integrations/test_hub_check.py",
    ],
    "attention_course/integrations/hub_check.py": [
        "tests/integrations/test_hub_check.py",
        "tests/integrations/test_hub_environment.py",
    ],
    "attention_course/integrations/check_grading.py": ["tests/integrations/test_hub_check.py"],
    "attention_course/integrations/jupyterhub.py": ["tests/integrations/test_jupyterhub_config.py"],
}
QUIZ_TESTS: dict[str, list[str]] = {
    "attention_course/quiz/types/multiple_select.py": [
        "tests/quiz/test_quiz_types.py",
        "tests/quiz/test_quiz_export_verdicts.py",
    ],
    "attention_course/quiz/types/shape.py": [
        "tests/quiz/test_quiz_types.py",
        "tests/quiz/test_quiz_export_verdicts.py",
    ],
    "attention_course/quiz/attempts.py": ["tests/quiz/test_quiz_cli.py"],
    "attention_course/quiz/terminal.py": ["tests/quiz/test_quiz_cli.py"],
    "attention_course/quiz/grading.py": ["tests/quiz/test_quiz_cli.py"],
}
SIMILARITY_TESTS: dict[str, list[str]] = {
    "attention_course/similarity/normalise.py": [
        "tests/similarity/test_normalise.py",
        "tests/similarity/test_canonical.py",
    ],
    "attention_course/similarity/report.py": ["tests/similarity/test_report.py"],
    "attention_course/similarity/score.py": ["tests/similarity/test_score.py"],
    "attention_course/similarity/compare.py": [
        "tests/similarity/test_score.py",
        "tests/similarity/test_base.py",
        "tests/similarity/test_compare.py",
    ],
    "attention_course/similarity/fingerprint.py": ["tests/similarity/test_fingerprint.py"],
}
CLI_TESTS: dict[str, list[str]] = {
    "attention_course/cli/hub_check_command.py": ["tests/cli/test_hub_check_cli.py"],
    "attention_course/cli/common.py": ["tests/cli/test_cli.py"],
    "attention_course/cli/autograde_command.py": ["tests/cli/test_cli.py"],
    "attention_course/cli/similarity_command.py": ["tests/cli/test_cli.py"],
    "attention_course/cli/quiz_command.py": ["tests/quiz/test_quiz_cli.py"],
}
COURSE_TESTS: dict[str, list[str]] = {
    "attention_course/course.py": ["tests/test_course.py", "tests/cli/test_cli.py"],
}
MODULES.update(SANDBOX_TESTS)
MODULES.update(CLASS_RUN_TESTS)
for wing in (GRADING_TESTS, INTEGRATION_TESTS, QUIZ_TESTS, SIMILARITY_TESTS, CLI_TESTS):
    MODULES.update(wing)
MODULES.update(COURSE_TESTS)
GROUPS = {
    "sandbox": ["attention_course/sandbox/program.py", *SANDBOX_TESTS],
    "classrun": list(CLASS_RUN_TESTS),
    # the grading core's modules listed first (MODULES' head) and the ones added with them
    "grading": [m for m in MODULES if m.startswith("attention_course/grading/")],
    "integrations": list(INTEGRATION_TESTS),
    "quiz": [m for m in MODULES if m.startswith("attention_course/quiz/")],
    "similarity": list(SIMILARITY_TESTS),
    "cli": list(CLI_TESTS),
    "course": list(COURSE_TESTS),
}


def ensure_cosmic_ray() -> None:
    try:
        import cosmic_ray  # noqa: F401
    except ImportError:
        print("installing cosmic-ray (the mutation extra) ...", file=sys.stderr)
        pip = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, "-e", f"{ROOT}[mutation]"], check=True)


def repository_files() -> list[Path]:
    """The repository's files: tracked and new ones, without what git ignores."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
            capture_output=True,
            check=True,
        ).stdout
        return [Path(p.decode()) for p in out.split(b"\0") if p]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache"}
        found = []
        for folder, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in skip and not d.endswith(".egg-info")]
            found += [Path(folder, f).relative_to(ROOT) for f in files]
        return found


def copy_repository(dest: Path) -> Path:
    for rel in repository_files():
        source = ROOT / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    return dest


def annotation_lines(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions of every type annotation in the module."""
    spans = []
    for node in ast.walk(ast.parse(path.read_text())):
        found = []
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            found.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            found.append(node.returns)
        for a in found:
            spans.append(((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)))
    return spans


def skip_annotations(session: Path, module: Path) -> int:
    """Mark the mutants inside type annotations as skipped (never evaluated at run time)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    spans = annotation_lines(module)
    skipped = 0
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            for m in item.mutations:
                start, end = tuple(m.start_pos), tuple(m.end_pos)
                if any(a <= start and end <= b for a, b in spans):
                    result = WorkResult(
                        output="inside a type annotation: never evaluated",
                        worker_outcome=WorkerOutcome.SKIPPED,
                    )
                    db.set_result(item.job_id, result)
                    skipped += 1
                    break
    return skipped


NOT_SAMPLED = "not in this run's sample"


def keep_sample(session: Path, fraction: float, seed: int) -> int:
    """Leave a seeded random `fraction` of the pending mutants to run and mark the others as
    skipped (mutant sampling: an unbiased estimate of the score in a fraction of the time)."""
    import random

    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    left_out = 0
    with use_db(str(session), WorkDB.Mode.open) as db:
        pending = sorted(db.pending_work_items, key=lambda item: item.job_id)
        chosen = set(
            random.Random(seed).sample(range(len(pending)), round(fraction * len(pending)))
        )
        for i, item in enumerate(pending):
            if i not in chosen:
                result = WorkResult(output=NOT_SAMPLED, worker_outcome=WorkerOutcome.SKIPPED)
                db.set_result(item.job_id, result)
                left_out += 1
    return left_out


def _pytest(module: str) -> str:
    return f"{sys.executable} -m pytest -x -q -p no:cacheprovider -o addopts= " + " ".join(
        MODULES[module]
    )


def _environment(repo: Path) -> dict[str, str]:
    # As CI runs the tests: a test that skips fails (tests/skips.py), so a mutant that makes
    # a test skip (no sandbox, no cgroup can be made) is killed, as CI would fail it.
    return dict(os.environ, PYTHONPATH=str(repo), PYTHONDONTWRITEBYTECODE="1", CI="true")


def _exec(base: Path, repo: Path) -> None:
    cosmic = str(Path(sys.executable).parent / "cosmic-ray")
    subprocess.run(
        [cosmic, "exec", str(base / "config.toml"), str(base / "session.sqlite")],
        cwd=repo,
        env=_environment(repo),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def prepare_module(module: str, workdir: Path, log, baseline: bool = True) -> Path:
    """A copy of the repository of the module's own and the module's mutants listed (those
    inside type annotations marked skipped); with `baseline`, the module's tests run once
    unmutated too (see `run_baseline`). The session file."""
    base = workdir / _name(module)
    repo, session = base / "repo", base / "session.sqlite"
    shutil.rmtree(base, ignore_errors=True)
    copy_repository(repo)
    _write_config(module, base, 60.0)
    cosmic = str(Path(sys.executable).parent / "cosmic-ray")
    subprocess.run(
        [cosmic, "init", str(base / "config.toml"), str(session)],
        cwd=repo,
        env=_environment(repo),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    skipped = skip_annotations(session, repo / module)
    print(f"{module}: {skipped} mutants in annotations skipped", file=log, flush=True)
    if baseline:
        run_baseline(module, workdir, log)
    return session


_baselines: dict[str, float] = {}  # tests (the pytest command) -> seconds, run unmutated


def run_baseline(module: str, workdir: Path, log) -> None:
    """Run the module's tests once unmutated (once per set of tests: modules that share them
    share the run): they must pass, and their time sets the timeout of a mutant's run (four
    times as long, at least a minute)."""
    base = workdir / _name(module)
    repo = base / "repo"
    command = _pytest(module)
    if command not in _baselines:
        start = time.monotonic()
        baseline = subprocess.run(
            command.split(), cwd=repo, env=_environment(repo), capture_output=True, text=True
        )
        if baseline.returncode != 0:
            tail = (baseline.stdout + baseline.stderr).strip().splitlines()[-15:]
            raise RuntimeError(f"{module}: the tests fail unmutated:\n" + "\n".join(tail))
        _baselines[command] = time.monotonic() - start
    seconds = _baselines[command]
    _write_config(module, base, max(60.0, 4 * seconds))
    print(f"{module}: tests take {seconds:.0f} s", file=log, flush=True)


def _write_config(module: str, base: Path, timeout: float) -> None:
    (base / "config.toml").write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        f"timeout = {timeout:.0f}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(_pytest(module))}\n"
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
    )


def _name(module: str) -> str:
    return module.replace("/", "__").removesuffix(".py")


def run_module(
    module: str,
    workdir: Path,
    log,
    recheck: bool = False,
    sample: float = 1.0,
    seed: int = 0,
    prepared: bool = False,
) -> dict:
    """Mutate `module` in a copy of the repository of its own; its results. With `recheck`,
    only the survivors of an earlier run in `workdir` are run again, with the tests as they
    are now; with `prepared`, the mutants `prepare_module` listed (and a sample kept) run."""
    base = workdir / _name(module)
    repo, session = base / "repo", base / "session.sqlite"
    start = time.monotonic()
    if recheck:
        if not session.exists():
            raise RuntimeError(f"{module}: no earlier run in {base}")
        copy_repository(repo)  # the tests as they are now (the module is unchanged)
        with sqlite3.connect(session) as db:
            db.execute("DELETE FROM work_results WHERE lower(test_outcome) = 'survived'")
        print(f"{module}: running the survivors again", file=log, flush=True)
    elif not prepared:
        prepare_module(module, workdir, log)
        if sample < 1.0:
            left_out = keep_sample(session, sample, seed)
            print(f"{module}: {left_out} left out of the sample", file=log, flush=True)
    _exec(base, repo)
    return collect(module, session, round(time.monotonic() - start))


def pending_count(session: Path) -> int:
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(str(session), WorkDB.Mode.open) as db:
        return sum(1 for _ in db.pending_work_items)


def keep_pooled_sample(sessions: dict[str, Path], count: int, seed: int) -> dict[str, int]:
    """Leave a seeded random `count` of the mutants of all `sessions` together to run (each
    mutant as likely as any other, whatever its module) and mark the others as not sampled.
    Returns how many each module keeps."""
    import random

    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    pool: list[tuple[str, str]] = []
    for module in sorted(sessions):
        with use_db(str(sessions[module]), WorkDB.Mode.open) as db:
            jobs = sorted(item.job_id for item in db.pending_work_items)
        pool += [(module, job) for job in jobs]
    chosen = set(random.Random(seed).sample(range(len(pool)), min(count, len(pool))))
    kept = dict.fromkeys(sessions, 0)
    left_out = WorkResult(output=NOT_SAMPLED, worker_outcome=WorkerOutcome.SKIPPED)
    for module, session in sessions.items():
        mine = [(i, job) for i, (owner, job) in enumerate(pool) if owner == module]
        kept[module] = sum(i in chosen for i, _ in mine)
        with use_db(str(session), WorkDB.Mode.open) as db:  # one transaction
            db.set_multiple_results([job for i, job in mine if i not in chosen], left_out)
    return kept


def collect(module: str, session: Path, seconds: int) -> dict:
    from cosmic_ray.work_db import WorkDB, use_db

    killed, survivors, incompetent, skipped, unsampled = 0, [], 0, 0, 0
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == "skipped":
                if result.output == NOT_SAMPLED:
                    unsampled += 1
                else:
                    skipped += 1
                continue
            mutation = item.mutations[0]
            where = f"{module}:{mutation.start_pos[0]} {mutation.operator_name}"
            if result.test_outcome == "survived":
                survivors.append({"where": where, "diff": result.diff or ""})
            elif result.test_outcome == "incompetent":
                incompetent += 1
                killed += 1
            else:
                killed += 1
    return {
        "module": module,
        "killed": killed,
        "total": killed + len(survivors),
        "incompetent": incompetent,
        "skipped": skipped,
        "unsampled": unsampled,
        "seconds": seconds,
        "survivors": survivors,
    }


def count_mutants(modules: list[str]) -> int:
    """Print how many mutants each module has outside type annotations (nothing is run)."""
    cosmic = str(Path(sys.executable).parent / "cosmic-ray")
    total = 0
    with tempfile.TemporaryDirectory(prefix="attention-mutation-count-") as folder:
        for module in modules:
            config, session = Path(folder, "config.toml"), Path(folder, _name(module) + ".sqlite")
            config.write_text(
                f'[cosmic-ray]\nmodule-path = "{ROOT / module}"\ntimeout = 1\n'
                'excluded-modules = []\ntest-command = "true"\n'
                '[cosmic-ray.distributor]\nname = "local"\n'
            )
            subprocess.run([cosmic, "init", str(config), str(session)], check=True)
            skip_annotations(session, ROOT / module)
            n = pending_count(session)
            total += n
            print(f"{module}: {n}")
    print(f"all: {total}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="modules to mutate (default: all)")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests")
    parser.add_argument("--jobs", type=int, default=1, help="modules mutated at the same time")
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="run only the survivors of the earlier run in --workdir again, with today's tests",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        help="where the copies and results go (default: a new folder under /var/tmp)",
    )
    parser.add_argument(
        "--sample",
        type=float,
        default=1.0,
        metavar="FRACTION",
        help="run a seeded random fraction of each module's mutants (default: 1, all of them)",
    )
    parser.add_argument(
        "--mutants",
        type=int,
        metavar="N",
        help="run a seeded random N of the mutants of all the modules named together "
        "(each mutant as likely as any other, whatever its module)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default: 0)")
    parser.add_argument(
        "--count",
        action="store_true",
        help="only count each module's mutants (outside type annotations), running nothing",
    )
    args = parser.parse_args(argv)
    if not 0.0 < args.sample <= 1.0:
        parser.error("--sample must be a fraction in (0, 1]")
    if args.mutants is not None and (args.mutants < 1 or args.sample < 1.0 or args.recheck):
        parser.error("--mutants takes a positive number, and neither --sample nor --recheck")
    if args.list:
        for module, tests in MODULES.items():
            print(f"{module}: {' '.join(tests)}")
        for group, members in GROUPS.items():
            print(f"{group}: {' '.join(members)}")
        return 0
    modules: list[str] = []
    for name in args.modules or list(MODULES):
        for module in GROUPS.get(name, [name]):
            if module not in modules:
                modules.append(module)
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)} (see --list)")
    if args.recheck and not args.workdir:
        parser.error("--recheck needs the --workdir of the earlier run")
    ensure_cosmic_ray()
    if args.count:
        return count_mutants(modules)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="attention-mutation-", dir="/var/tmp"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"working in {workdir}", file=sys.stderr)
    prepared = args.mutants is not None
    if prepared:  # drawn first: only the modules with mutants in the sample run their tests
        sessions = {m: prepare_module(m, workdir, sys.stderr, baseline=False) for m in modules}
        kept = keep_pooled_sample(sessions, args.mutants, args.seed)
        print(f"sample (seed {args.seed}): {kept}", file=sys.stderr, flush=True)
        modules = [m for m in modules if kept[m]]
        for module in modules:
            run_baseline(module, workdir, sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(
            pool.map(
                lambda m: run_module(
                    m, workdir, sys.stderr, args.recheck, args.sample, args.seed, prepared
                ),
                modules,
            )
        )
    (workdir / "results.json").write_text(json.dumps(results, indent=1))
    print()
    for r in results:
        for s in r["survivors"]:
            print(f"survived: {s['where']}")
            changed = [
                ln for ln in s["diff"].splitlines() if ln[:1] in "+-" and ln[:3] not in "+++---"
            ]
            print("  " + "\n  ".join(changed))
    print()
    width = max(len(r["module"]) for r in results)
    for r in results:
        score = 100 * r["killed"] / r["total"] if r["total"] else 100.0
        print(
            f"{r['module']:<{width}}  {r['killed']:>4} / {r['total']:<4} killed  {score:5.1f}%"
            f"  ({r['skipped']} in annotations skipped,"
            + (f" {r['unsampled']} not sampled," if r.get("unsampled") else "")
            + f" {r['seconds']} s)"
        )
    killed, total = sum(r["killed"] for r in results), sum(r["total"] for r in results)
    print(f"{'all':<{width}}  {killed:>4} / {total:<4} killed  {100 * killed / total:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
