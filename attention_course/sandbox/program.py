"""Run a student's program in a sandboxed worker and bring back plain data.

The process that calls `run_program` (a grader holding the reference) never executes student
code. The worker (`inside/worker.py`) runs in the sandbox of `jail.py`, one step at a time: this
side sends each cell and each call, and gives it a deadline that only this side keeps. If the
worker dies or hangs, the step that was running is recorded with the reason (this side knows it:
it asked for it), and a fresh worker carries on with the rest; later calls of a function that
hung or killed its worker are skipped, not re-run. A cell's or a call's CPU time decides when
it has run too long (with a wall-clock backstop for code that sleeps: settings.py), and so
does a worker's; the submission's deadline is absolute, by the clock, and shared by all its
workers and by every program run of one submission (`deadline`).
"""

from __future__ import annotations

import fcntl
import functools
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from attention_course import trace
from attention_course.sandbox.confined import Confined, Died
from attention_course.settings import PACING, Limits

__all__ = [
    "Call",
    "Limits",
    "Outcome",
    "ProgramRun",
    "SandboxError",
    "run_program",
    "submission_deadline",
    "used_up",
]


class SandboxError(RuntimeError):
    """The worker could not be started at all (a fault of the grading machine, not the student)."""


@dataclass(frozen=True)
class Call:
    """One call of a student function; arguments are arrays or plain Python values."""

    key: str
    function: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    readonly: bool = False  # pass read-only arrays
    errstate: bool = False  # run under np.errstate(over/invalid/divide="raise")


@dataclass
class Outcome:
    """What one call did. status: ok, error, timeout, missing, crashed, skipped or unreadable."""

    status: str
    value: Any = None
    error_type: str = ""
    error_message: str = ""
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0  # as the worker measured the call (0.0: it sent no reply)
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


@dataclass(frozen=True)
class OutsideCall:
    """A call the student's code made of a function this side computed (`outside`): its
    arguments as they came in, and the value sent back."""

    function: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    value: Any


@dataclass
class ProgramRun:
    outcomes: dict[str, Outcome]
    cell_errors: list[CellReport]
    notes: list[str]
    workers: int
    outside_calls: dict[str, list[OutsideCall]] = field(default_factory=dict)  # by call key


# --------------------------------------------------------------------------- encoding


class UnsupportedValue(ValueError):
    """The student's function returned something other than arrays, numbers or strings."""


class SharedInputs:
    """The arrays of the calls with read-only inputs, laid out in one memory file.

    `open()` writes them into a fresh memfd and seals it (no write, no resize, by anyone: the
    kernel refuses), then hands out a read-only descriptor of it, which the worker maps read-only.
    What a call with read-only inputs is given is therefore this side's bytes, unchanged by
    construction: no check in the sandbox is needed, or trusted."""

    ALIGN = 64

    def __init__(self) -> None:
        self.arrays: list[tuple[int, np.ndarray]] = []
        self.size = 0

    def add(self, arr: np.ndarray) -> dict[str, Any]:
        arr = arr if arr.flags.c_contiguous else arr.copy(order="C")
        offset = -(-self.size // self.ALIGN) * self.ALIGN
        self.arrays.append((offset, arr))
        self.size = offset + arr.nbytes
        return {"shared": {"dtype": arr.dtype.str, "shape": list(arr.shape), "offset": offset}}

    def open(self) -> int | None:
        """A read-only descriptor of the sealed file (None when there is nothing to share)."""
        if not self.arrays:
            return None
        fd = os.memfd_create("grading-inputs", os.MFD_ALLOW_SEALING | os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, self.bytes)
            for offset, arr in self.arrays:
                os.pwrite(fd, arr.tobytes(), offset)
            seals = (fcntl.F_SEAL_WRITE, fcntl.F_SEAL_GROW, fcntl.F_SEAL_SHRINK, fcntl.F_SEAL_SEAL)
            for seal in seals:  # one at a time, the seal against more seals last
                fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seal)
            return os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)  # (os.open adds O_CLOEXEC)
        finally:
            os.close(fd)

    @property
    def bytes(self) -> int:
        return max(self.size, 1)


def _encode_input(
    value: Any, arrays: list[np.ndarray], shared: SharedInputs | None = None
) -> dict[str, Any]:
    if isinstance(value, np.ndarray):
        if shared is not None:
            return shared.add(value)
        arrays.append(value)
        return {"array": len(arrays) - 1}
    if isinstance(value, tuple):
        return {"tuple": [_encode_input(v, arrays, shared) for v in value]}
    if isinstance(value, list):
        return {"list": [_encode_input(v, arrays, shared) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    raise TypeError(f"cannot pass {type(value).__name__} to a worker")


# The largest integer the worker sends as one (its encoder sends a larger one as a float): a
# larger one in a reply was written by student code, and no grader is given it (10**400 would
# make a grader's float() raise: the student's doing, never a fault of grading).
WORKER_INT = 2**62


def _decode_output(spec: Any, arrays: list[np.ndarray]) -> Any:
    """A value the worker sent, checked for what the worker's encoder can send before any
    grader sees it (ValueError, or UnsupportedValue, otherwise)."""
    if not isinstance(spec, dict) or not spec:
        raise ValueError("malformed value")
    if "value" in spec:
        value = spec["value"]
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise ValueError("malformed value")
        if type(value) is int and abs(value) > WORKER_INT:  # the worker sends it as a float
            raise ValueError("malformed value")
        return value
    if "float" in spec:
        if type(spec["float"]) is not float:  # what the worker sends: a float (JSON number)
            raise ValueError("malformed value")
        return spec["float"]
    if "array" in spec:
        index = spec["array"]
        if type(index) is not int or not 0 <= index < len(arrays):
            raise ValueError("malformed value")
        arr = arrays[index]
        return arr[()] if spec.get("scalar") is True else arr
    if "tuple" in spec:
        return tuple(_decode_output(s, arrays) for s in spec["tuple"])
    if "list" in spec:
        return [_decode_output(s, arrays) for s in spec["list"]]
    if "dict" in spec:
        return {str(k): _decode_output(v, arrays) for k, v in dict(spec["dict"]).items()}
    if "unsupported" in spec:
        raise UnsupportedValue(f"returned {str(spec['unsupported'])[:80]}, not arrays or numbers")
    raise ValueError("malformed value")


def _outcome(reply: dict[str, Any], arrays: list[np.ndarray]) -> Outcome:
    """A call's reply, checked field by field (the worker runs student code)."""
    try:
        status = str(reply["status"])
        seconds = reply.get("seconds", 0.0)
        if type(seconds) is not float or not 0.0 <= seconds < 1e9:
            raise ValueError("malformed seconds")
        out = Outcome(status=status, seconds=seconds)
        out.warnings = [str(w)[:500] for w in list(reply.get("warnings", []))[:10]]
        if status == "ok":
            out.value = _decode_output(reply["value"], arrays)
        elif status == "error":
            out.error_type = str(reply["error"]["type"])[:100]
            out.error_message = str(reply["error"]["message"])[:500]
        elif status not in ("timeout", "missing"):
            raise ValueError(status)  # (unreadable, below: the message is not shown)
        return out
    except UnsupportedValue as exc:
        return Outcome(status="unreadable", detail=str(exc))
    except Exception:
        return Outcome(status="unreadable", detail="its result could not be read back")


def _cell_error(reply: dict[str, Any]) -> tuple[str, str] | None:
    error = reply.get("error")
    if not error:
        return None
    if not isinstance(error, dict):
        return ("Error", "the cell failed")
    return str(error.get("type"))[:100], str(error.get("message"))[:500]


class _Program:
    """The state of one submission's run across workers."""

    def __init__(
        self,
        cells: list[tuple[str, str]],
        calls: list[Call],
        limits: Limits,
        hide: list[Path],
        unsandboxed: bool,
        deadline: float,
        outside: Mapping[str, Callable[..., Any]] | None = None,
    ) -> None:
        self.cells = cells
        self.outside = dict(outside or {})
        self.outside_calls: dict[str, list[OutsideCall]] = {}
        self.outside_count = 0
        self.calls = calls
        self.limits = limits
        self.hide = hide
        self.unsandboxed = unsandboxed
        self.outcomes: dict[str, Outcome] = {}
        self.cell_errors: dict[int, CellReport] = {}
        self.notes: list[str] = []
        self.skip_cells: set[int] = set()
        self.dead: dict[str, str] = {}  # function -> why its later calls are skipped
        self.workers = 0
        self.result_bytes = 0
        self.deadline = deadline
        self.inputs_fd: int | None = None
        self.requests: list[tuple[dict[str, Any], list[np.ndarray]]] = []
        self.shared = SharedInputs()  # the inputs of calls with read-only inputs
        for c in calls:
            arrays: list[np.ndarray] = []
            into = self.shared if c.readonly else None
            header = {
                "op": "call",
                "function": c.function,
                "args": [_encode_input(a, arrays, into) for a in c.args],
                "kwargs": {k: _encode_input(v, arrays, into) for k, v in c.kwargs.items()},
                "readonly": c.readonly,
                "errstate": c.errstate,
                "outside": sorted(self.outside),
                "timeout": limits.call_timeout,
                "wall": limits.backstop(limits.call_timeout),
                "idle": limits.idle_share,
            }
            self.requests.append((header, arrays))

    def skip_rest(self, indices: list[int], detail: str) -> None:
        for i in indices:
            self.outcomes[self.calls[i].key] = Outcome(status="skipped", detail=detail)

    def run_worker(self, run: list[int]) -> None:
        """One worker: every cell not known to kill a worker, then the calls in `run`."""
        limits = self.limits
        deadline = min(self.deadline, time.monotonic() + limits.backstop(limits.worker_timeout))
        self.workers += 1
        step: tuple[str, int] | None = None
        settings: dict[str, Any] = {"max_elements": limits.result_elements}
        if self.inputs_fd is not None:
            settings.update(inputs_fd=self.inputs_fd, inputs_bytes=self.shared.bytes)
        worker = Confined(
            "worker.py",
            settings,
            limits,
            unsandboxed=self.unsandboxed,
            hide=self.hide,
            cpu_budget=limits.worker_timeout,
            pass_fds=() if self.inputs_fd is None else (self.inputs_fd,),
        )
        try:
            worker.start(deadline)
            trace.mark("first student cell", worker.cpu_seconds())
            for index, (cid, source) in enumerate(self.cells):
                if index in self.skip_cells:
                    continue
                step = ("cell", index)
                request: dict[str, Any] = {"op": "cell", "id": cid, "source": source}
                request["timeout"] = limits.cell_timeout
                request["wall"] = limits.backstop(limits.cell_timeout)
                request["idle"] = limits.idle_share
                reply, _ = worker.request(request, timeout=limits.cell_timeout, deadline=deadline)
                error = _cell_error(reply)
                if error:
                    self.cell_errors[index] = CellReport(index, cid, *error)
            for i in run:
                call = self.calls[i]
                if call.function in self.dead:
                    self.skip_rest([i], self.dead[call.function])
                    continue
                step = ("call", i)
                header, arrays = self.requests[i]
                reply, out = worker.request(
                    header,
                    arrays,
                    timeout=limits.call_timeout,
                    deadline=deadline,
                    serve=functools.partial(self.serve, call.key) if self.outside else None,
                )
                self.result_bytes += sum(a.nbytes for a in out)
                if self.result_bytes > limits.program_result_bytes:
                    got = Outcome(status="unreadable", detail="returned more data than allowed")
                else:
                    got = _outcome(reply, out)
                self.outcomes[call.key] = got
                if got.status == "timeout":
                    self.dead[call.function] = (
                        f"not run: an earlier call of {call.function} ran longer than the "
                        "time limit"
                    )
        except Died as exc:
            self.died(step, str(exc), worker)
        finally:
            worker.close(grace=PACING.end_grace)  # a worker that is done ends on its own

    def serve(
        self, key: str, header: dict[str, Any], arrays: list[np.ndarray]
    ) -> tuple[dict[str, Any], list[np.ndarray]]:
        """Compute, on this side, a function the call `key` asked for (`outside`); every
        argument is checked as a reply's value is, and its size kept small before it is used."""
        limits = self.limits

        def refuse(why: str) -> tuple[dict[str, Any], list[np.ndarray]]:
            return {"op": "outside", "status": "error", "error": why[:200]}, []

        name = header.get("function")
        if not isinstance(name, str) or name not in self.outside:
            return refuse("no such function is given from outside")
        self.outside_count += 1
        if self.outside_count > limits.outside_calls:
            return refuse(f"more than {limits.outside_calls} calls of the course's functions")
        if sum(a.size for a in arrays) > limits.outside_call_elements:
            return refuse(f"arguments of more than {limits.outside_call_elements} elements")
        try:
            args = tuple(_decode_output(v, arrays) for v in list(header["args"]))
            kwargs = {str(k): _decode_output(v, arrays) for k, v in dict(header["kwargs"]).items()}
        except Exception:
            return refuse("its arguments could not be read")
        if not all(_small(v, limits.outside_call_elements) for v in (*args, *kwargs.values())):
            return refuse(f"an argument larger than {limits.outside_call_elements}")
        try:
            with np.errstate(all="ignore"):
                value = self.outside[name](*args, **kwargs)
            out: list[np.ndarray] = []
            spec = _encode_input(_plain(value), out)
        except Exception:  # the course's function refused these arguments (nothing said why)
            return refuse(f"the course's {name} could not take these arguments")
        self.outside_calls.setdefault(key, []).append(OutsideCall(name, args, kwargs, value))
        return {"op": "outside", "status": "ok", "value": spec}, out

    def died(self, step: tuple[str, int] | None, reason: str, worker: Confined) -> None:
        if step is None:
            if time.monotonic() >= self.deadline - self.limits.grace:
                return  # out of time: the caller skips what is left
            raise SandboxError(
                f"the grading worker did not start: {reason}\n{worker.stderr_tail()}"
            )
        kind, index = step
        if kind == "cell":
            cid = self.cells[index][0]
            self.cell_errors[index] = CellReport(index, cid, "WorkerDied", f"the cell {reason}")
            self.skip_cells.add(index)
            self.notes.append(f"cell {cid!r} {reason}; the remaining cells ran in a fresh process")
            return
        call = self.calls[index]
        timed_out = "stopped after" in reason
        status = "timeout" if timed_out else "crashed"
        self.outcomes[call.key] = Outcome(status=status, detail=reason)
        if timed_out or not call.readonly:  # (a write into read-only inputs: that call's)
            self.dead[call.function] = f"not run: an earlier call of {call.function} {reason}"
        self.notes.append(f"{call.function} {reason}")

    def run(self) -> ProgramRun:
        self.inputs_fd = self.shared.open()
        try:
            return self._run()
        finally:
            if self.inputs_fd is not None:
                os.close(self.inputs_fd)

    def _run(self) -> ProgramRun:
        while True:
            # calls with read-only inputs last: one that crashes its worker by writing into them
            # costs that call only, never the calls after it
            pending = [i for i, c in enumerate(self.calls) if c.key not in self.outcomes]
            pending.sort(key=lambda i: self.calls[i].readonly)
            run = []
            for i in pending:
                function = self.calls[i].function
                if function in self.dead:
                    self.skip_rest([i], self.dead[function])
                else:
                    run.append(i)
            if not run and self.workers:
                break
            if time.monotonic() >= self.deadline:
                spent = used_up(self.limits)
                self.skip_rest(run, f"not run: {spent}")
                self.notes.append(f"grading stopped: {spent}")
                break
            if self.workers > self.limits.max_restarts:
                self.skip_rest(run, "not run: the worker crashed too many times")
                self.notes.append("gave up after too many worker crashes")
                break
            self.run_worker(run)
        return ProgramRun(
            outcomes=self.outcomes,
            cell_errors=[self.cell_errors[i] for i in sorted(self.cell_errors)],
            notes=self.notes,
            workers=self.workers,
            outside_calls=self.outside_calls,
        )


def _small(value: Any, most: int) -> bool:
    """Whether an argument is no larger than `most`: a number (a size the function may
    allocate the square of) or the items of a tuple or list."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, (int, float)):
        return abs(value) <= most
    if isinstance(value, (tuple, list)):
        return len(value) <= most and all(_small(v, most) for v in value)
    return isinstance(value, np.ndarray)


def _plain(value: Any) -> Any:
    """A value made of arrays, tuples, lists and plain numbers (a numpy scalar as a 0-d array)."""
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value


def used_up(limits: Limits) -> str:
    """Why what is left of a submission is not run."""
    return f"the submission used up its {limits.submission_timeout:g} s of grading time"


def submission_deadline(limits: Limits) -> float:
    """The absolute deadline (time.monotonic()) of a submission whose grading starts now."""
    return time.monotonic() + limits.submission_timeout


def run_program(
    cells: list[tuple[str, str]],
    calls: list[Call],
    limits: Limits | None = None,
    hide: list[Path] | None = None,
    unsandboxed: bool = False,
    deadline: float | None = None,
    outside: Mapping[str, Callable[..., Any]] | None = None,
) -> ProgramRun:
    """Execute `cells` (id, source) in a sandboxed worker, then every call; collect outcomes.

    `outside` names functions this side computes: in every call, the student's code sees
    each name as a stand-in that sends its arguments here and returns what the function gave
    (`ProgramRun.outside_calls` records each); no code of them runs in the sandbox.
    `hide` lists more folders the worker must not see (the course folder is never mounted).
    `unsandboxed=True` runs the worker with limits only: the caller must say so to the user.
    `deadline` (time.monotonic()) is the submission's, shared by every program run of it
    (default: `limits.submission_timeout` from now); nothing of this run goes past it.
    """
    keys = [c.key for c in calls]
    if len(set(keys)) != len(keys):
        raise ValueError("call keys must be unique")
    limits = limits or Limits()
    if deadline is None:
        deadline = submission_deadline(limits)
    program = _Program(cells, calls, limits, list(hide or []), unsandboxed, deadline, outside)
    return program.run()
