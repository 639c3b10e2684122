"""Run a student's program in a worker process of its own and bring back plain data.

The process that calls `run_program` (a grader holding the reference) never executes student
code. The worker (`worker.py`) runs under time, memory, CPU and file-size limits, in an empty
working folder, and, where bubblewrap is installed, in a sandbox that hides the course folder
(graders, reference, other submissions, gradebook) and the network. If the worker dies or hangs,
the step that was running is recorded with the reason, and a fresh worker carries on with the
rest; later calls of a function that hung or killed its worker are skipped, not re-run.
"""

from __future__ import annotations

import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

WORKER_SCRIPT = Path(__file__).with_name("worker.py")


class SandboxError(RuntimeError):
    """The worker could not be started at all (a fault of the grading machine, not the student)."""


@dataclass(frozen=True)
class Limits:
    """Defaults for one submission's worker; every grading path uses these unless told otherwise."""

    cell_timeout: float = 10.0  # seconds for one set-up or solution cell
    call_timeout: float = 5.0  # seconds for one call of a graded function
    grace: float = 2.0  # extra wall-clock seconds before a stuck worker is killed
    startup_timeout: float = 60.0  # seconds for Python and numpy to start
    memory_bytes: int = 3 * 1024**3  # address space of the worker
    cpu_seconds: int = 300  # CPU time of one worker process
    file_bytes: int = 64 * 1024**2  # largest file the worker may write
    max_restarts: int = 10  # fresh workers after crashes, per submission
    isolate: str = "auto"  # "bwrap", "none" or "auto" (bwrap when installed)


@dataclass(frozen=True)
class Call:
    """One call of a student function; arguments are arrays or plain Python values."""

    key: str
    function: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    readonly: bool = False  # pass read-only arrays
    errstate: bool = False  # run under np.errstate(over/invalid/divide="raise")


@dataclass
class Outcome:
    """What one call did. status: ok, error, timeout, missing, crashed, skipped or unreadable."""

    status: str
    value: Any = None
    error_type: str = ""
    error_message: str = ""
    inputs_after: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    seconds: float = 0.0
    detail: str = ""

    def describe(self) -> str:
        """One line for a student: why there is no usable return value."""
        if self.status == "error":
            text = f"raised {self.error_type}: {self.error_message}".rstrip(": ")
            if self.error_type == "NameError":
                text += (
                    " (only the set-up cell and the solution cells are graded: define "
                    "helpers and imports inside the function's own cell)"
                )
            return text
        if self.status == "missing":
            return "is not defined (did its cell run without errors?)"
        if self.status == "timeout":
            return "ran longer than the time limit (an endless loop?)"
        return self.detail or self.status


@dataclass
class CellReport:
    index: int
    cell_id: str
    error_type: str
    error_message: str


@dataclass
class ProgramRun:
    outcomes: dict[str, Outcome]
    cell_errors: list[CellReport]
    notes: list[str]
    workers: int


# --------------------------------------------------------------------------- encoding


class UnsupportedValue(ValueError):
    """The student's function returned something other than arrays, numbers or strings."""


def _encode_input(value: Any, arrays: dict[str, np.ndarray]) -> dict:
    if isinstance(value, np.ndarray):
        name = f"i{len(arrays)}"
        arrays[name] = value
        return {"array": name}
    if isinstance(value, tuple):
        return {"tuple": [_encode_input(v, arrays) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    raise TypeError(f"cannot pass {type(value).__name__} to a worker")


def _decode_output(spec: Any, arrays: dict[str, np.ndarray]) -> Any:
    if not isinstance(spec, dict) or len(spec) == 0:
        raise ValueError("malformed value")
    if "value" in spec:
        value = spec["value"]
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise ValueError("malformed value")
        return value
    if "float" in spec:
        return float(spec["float"])
    if "array" in spec:
        arr = arrays[str(spec["array"])]
        return arr[()] if spec.get("scalar") else arr
    if "tuple" in spec:
        return tuple(_decode_output(s, arrays) for s in spec["tuple"])
    if "list" in spec:
        return [_decode_output(s, arrays) for s in spec["list"]]
    if "dict" in spec:
        return {str(k): _decode_output(v, arrays) for k, v in dict(spec["dict"]).items()}
    if "unsupported" in spec:
        raise UnsupportedValue(f"returned {str(spec['unsupported'])[:80]}, not arrays or numbers")
    raise ValueError("malformed value")


def _read_outcome(job_dir: Path, index: int) -> Outcome | None:
    path = job_dir / f"r{index}.json"
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text())
        arrays: dict[str, np.ndarray] = {}
        npz = job_dir / f"r{index}.npz"
        if npz.exists():
            with np.load(npz, allow_pickle=False) as data:
                arrays = {k: np.array(data[k]) for k in data.files}
        status = str(raw["status"])
        out = Outcome(status=status, seconds=float(raw.get("seconds", 0.0)))
        out.warnings = [str(w)[:500] for w in raw.get("warnings", [])][:10]
        out.inputs_after = [_decode_output(s, arrays) for s in raw.get("inputs_after", [])]
        if status == "ok":
            out.value = _decode_output(raw["value"], arrays)
        elif status == "error":
            out.error_type = str(raw["error"]["type"])[:100]
            out.error_message = str(raw["error"]["message"])[:500]
        elif status == "skipped":
            out.detail = str(raw.get("detail", "not run"))[:300]
        elif status not in ("timeout", "missing"):
            raise ValueError(f"unknown status {status[:40]!r}")
        return out
    except UnsupportedValue as exc:
        return Outcome(status="unreadable", detail=str(exc))
    except Exception:
        return Outcome(status="unreadable", detail="its result could not be read back")


def _read_progress(job_dir: Path) -> list[dict]:
    path = job_dir / "progress.jsonl"
    if not path.exists():
        return []
    events = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


# --------------------------------------------------------------------------- processes


@functools.cache
def bwrap_path() -> str | None:
    """bubblewrap, if it is installed and can make a sandbox on this machine (some containers
    forbid the namespaces it needs); checked once per process."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = [
        path,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-all",
        "--die-with-parent",
        "true",
    ]
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return path if ok else None


def hide_args(hide: list[Path]) -> list[str]:
    """bubblewrap arguments that cover each folder with an empty tmpfs (nested ones once), and
    bring back this Python's virtual environment where it lies inside one of them."""
    paths = sorted({p.resolve() for p in hide if p.exists()})
    top = [p for p in paths if not any(p != q and p.is_relative_to(q) for q in paths)]
    prefix = Path(sys.prefix).resolve()
    args: list[str] = []
    for path in top:
        args += ["--tmpfs", str(path)]
        if prefix.is_relative_to(path):
            args += ["--ro-bind", str(prefix), str(prefix)]
    return args


def _worker_command(job_dir: Path, limits: Limits, hide: list[Path]) -> list[str]:
    python = [sys.executable, "-I", str(job_dir / "worker.py"), str(job_dir)]
    use_bwrap = limits.isolate == "bwrap" or (limits.isolate == "auto" and bwrap_path())
    if not use_bwrap:
        return python
    bwrap = bwrap_path()
    if bwrap is None:
        raise SandboxError("isolate='bwrap' was asked for but bubblewrap is not usable here")
    cmd = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    cmd += hide_args(hide)
    cmd += ["--bind", str(job_dir), str(job_dir), "--chdir", str(job_dir / "work")]
    cmd += ["--unshare-all", "--die-with-parent", "--new-session", "--setenv", "HOME", str(job_dir)]
    return cmd + python


def _worker_env(job_dir: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(job_dir),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _limit_resources(limits: Limits):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _exit_reason(returncode: int | None, timed_out: float | None) -> str:
    if timed_out is not None:
        return f"was stopped after {timed_out:g} s (an endless loop, or far too slow)"
    if returncode is not None and returncode < 0:
        sig = -returncode
        if sig == signal.SIGXCPU:
            return "used up the CPU time limit"
        if sig == signal.SIGKILL:
            return "was killed (signal 9: out of memory?)"
        return f"was killed by signal {signal.Signals(sig).name}"
    return f"ended the grading process (exit code {returncode}: os._exit or a crash?)"


def _run_worker(job_dir: Path, limits: Limits, hide: list[Path]) -> tuple[list[dict], str]:
    """Run one worker to completion or death. Returns its progress events and a death reason."""
    for stale in job_dir.glob("progress.jsonl"):
        stale.unlink()
    out = open(job_dir / "worker.out", "ab")
    try:
        proc = subprocess.Popen(
            _worker_command(job_dir, limits, hide),
            cwd=job_dir / "work",
            env=_worker_env(job_dir),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_limit_resources(limits),
        )
    finally:
        out.close()
    seen = 0
    step_started = time.monotonic()
    budget = limits.startup_timeout
    timed_out = None
    while True:
        try:
            proc.wait(timeout=0.02)
            break
        except subprocess.TimeoutExpired:
            pass
        events = _read_progress(job_dir)
        if len(events) > seen:
            seen = len(events)
            step_started = time.monotonic()
            last = events[-1].get("step")
            budget = {"cell": limits.cell_timeout, "call": limits.call_timeout}.get(
                last, limits.startup_timeout
            )
            budget += limits.grace
        if time.monotonic() - step_started > budget:
            timed_out = round(budget - limits.grace, 3)
            _kill(proc)
            break
    events = _read_progress(job_dir)
    if events and events[-1].get("step") == "done":
        return events, ""
    return events, _exit_reason(proc.returncode, timed_out)


def run_program(
    cells: list[tuple[str, str]],
    calls: list[Call],
    limits: Limits | None = None,
    hide: list[Path] | None = None,
) -> ProgramRun:
    """Execute `cells` (id, source) in a fresh worker, then every call; collect plain outcomes.

    `hide` lists folders the worker must not see (when bubblewrap is available).
    """
    limits = limits or Limits()
    hide = list(hide or [])
    keys = [c.key for c in calls]
    if len(set(keys)) != len(keys):
        raise ValueError("call keys must be unique")
    outcomes: dict[str, Outcome] = {}
    cell_errors: dict[int, CellReport] = {}
    notes: list[str] = []
    skip_cells: list[int] = []
    dead: dict[str, str] = {}  # function -> why later calls are skipped
    workers = 0
    with tempfile.TemporaryDirectory(prefix="attention-course-") as tmp:
        job_dir = Path(tmp)
        (job_dir / "work").mkdir()
        shutil.copyfile(WORKER_SCRIPT, job_dir / "worker.py")
        arrays: dict[str, np.ndarray] = {}
        encoded = [
            {
                "key": c.key,
                "function": c.function,
                "args": [_encode_input(a, arrays) for a in c.args],
                "kwargs": {k: _encode_input(v, arrays) for k, v in c.kwargs.items()},
                "readonly": c.readonly,
                "errstate": c.errstate,
            }
            for c in calls
        ]
        np.savez(job_dir / "inputs.npz", **arrays)
        while True:
            pending = [i for i, c in enumerate(calls) if c.key not in outcomes]
            run = []
            for i in pending:
                fn = calls[i].function
                if fn in dead:
                    outcomes[calls[i].key] = Outcome(status="skipped", detail=dead[fn])
                else:
                    run.append(i)
            if not run and workers > 0:
                break
            if workers > limits.max_restarts:
                for i in run:
                    outcomes[calls[i].key] = Outcome(
                        status="skipped", detail="not run: the worker crashed too many times"
                    )
                notes.append("gave up after too many worker crashes")
                break
            job = {
                "cells": [{"id": cid, "source": src} for cid, src in cells],
                "calls": encoded,
                "run": run,
                "skip_cells": skip_cells,
                "cell_timeout": limits.cell_timeout,
                "call_timeout": limits.call_timeout,
            }
            (job_dir / "job.json").write_text(json.dumps(job))
            workers += 1
            events, reason = _run_worker(job_dir, limits, hide)
            for event in events:
                if event.get("step") == "cell_done" and event.get("error"):
                    i = int(event["index"])
                    err = event["error"]
                    cell_errors[i] = CellReport(
                        i, cells[i][0], str(err.get("type"))[:100], str(err.get("message"))[:500]
                    )
            for i in run:
                got = _read_outcome(job_dir, i)
                if got is not None:
                    outcomes[calls[i].key] = got
            if not reason:
                continue
            if not events:
                tail = (job_dir / "worker.out").read_text(errors="replace")[-2000:]
                raise SandboxError(f"the grading worker did not start: {reason}\n{tail}")
            last = events[-1]
            index = int(last.get("index", -1))
            if last.get("step") == "cell":
                cid = cells[index][0]
                cell_errors[index] = CellReport(index, cid, "WorkerDied", f"the cell {reason}")
                skip_cells.append(index)
                notes.append(f"cell {cid!r} {reason}; the remaining cells ran in a fresh process")
            elif last.get("step") == "call" and calls[index].key not in outcomes:
                call = calls[index]
                status = "timeout" if "stopped after" in reason else "crashed"
                outcomes[call.key] = Outcome(status=status, detail=reason)
                dead[call.function] = f"not run: an earlier call of {call.function} {reason}"
                notes.append(f"{call.function} {reason}")
    return ProgramRun(
        outcomes=outcomes,
        cell_errors=[cell_errors[i] for i in sorted(cell_errors)],
        notes=notes,
        workers=workers,
    )
