"""Execute a notebook in the sandbox, cell by cell, without a Jupyter kernel.

`execute_notebook` fills in each code cell's outputs and execution count the way nbclient does
with a kernel, from `inside/cells.py` (an IPython shell in the sandbox of `jail.py`). Each cell
has its own time limit and the notebook one budget, both kept here and both of CPU time (that
of the notebook's processes, all of them together for the budget), each with a wall-clock
backstop for code that sleeps: the notebook's is an absolute deadline, and no cell, no start
of a process and no replay goes past either. A cell that kills its process or ignores its
alarm gets an error output saying so; a fresh process re-runs the earlier cells silently and
goes on with the next one. Cells past the budget are marked as not run. Every output that
comes back is rebuilt field by field and made inert: only plain text and PNG/JPEG images
survive, so nothing a student displays becomes live HTML or JavaScript in the feedback. The
outputs of a cell and of the notebook are capped here, whatever the process inside says.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbformat.notebooknode import NotebookNode

from attention_course.sandbox.confined import Confined, Died
from attention_course.settings import PACING, Limits

SAFE_IMAGES = ("image/png", "image/jpeg")
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")


@dataclass
class NotebookRun:
    """What happened besides the outputs: deaths, time, restarts (for notes in the feedback)."""

    notes: list[str] = field(default_factory=list)
    died_at: int | None = None  # index of the first cell whose process died or hung
    out_of_time: bool = False
    processes: int = 0


def _new_output(output_type: str, **fields: Any) -> NotebookNode:
    """nbformat's new_output, typed (nbformat leaves it unannotated: hence the ignore)."""
    new = nbformat.v4.new_output
    output: NotebookNode = new(output_type, **fields)  # type: ignore[no-untyped-call]
    return output


def _text(value: object, limit: int) -> str:
    """Text of an output field (a string, or a list of them, as nbformat stores it); whatever
    else came back is shown as its repr."""
    if isinstance(value, list):
        text = "".join(v if isinstance(v, str) else repr(v) for v in value)
    else:
        text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "\n[truncated]\n"


def _bundle(data: object, limit: int) -> dict[str, str]:
    """Only plain text and PNG/JPEG images; anything else is named, not shown."""
    if not isinstance(data, dict):
        return {"text/plain": "[an output that could not be read]"}
    bundle: dict[str, str] = {}
    for mime in SAFE_IMAGES:
        value = data.get(mime)
        if isinstance(value, str) and len(value) <= limit and _BASE64.match(value):
            bundle[mime] = value
    plain = data.get("text/plain")
    if plain is not None:
        bundle["text/plain"] = _text(plain, limit)
    dropped = sorted(str(m)[:60] for m in data if m not in bundle)
    if dropped and "text/plain" not in bundle:
        bundle["text/plain"] = f"[{', '.join(dropped)} output, not shown in the graded copy]"
    return bundle


def _image_metadata(metadata: object) -> dict[str, dict[str, Any]]:
    """Keep only numeric image sizes (they end up as HTML attributes)."""
    out: dict[str, dict[str, Any]] = {}
    if not isinstance(metadata, dict):
        return out
    for mime in SAFE_IMAGES:
        sizes = metadata.get(mime)
        if isinstance(sizes, dict):
            kept = {k: v for k, v in sizes.items() if k in ("width", "height")}
            kept = {k: v for k, v in kept.items() if type(v) in (int, float)}
            if kept:
                out[mime] = kept
    return out


def _counted(count: object) -> bool:
    """An execution count is a whole number from 0 up (not a bool, which is an int too)."""
    return isinstance(count, int) and not isinstance(count, bool) and count >= 0


def inert_output(raw: object, limit: int) -> NotebookNode:
    """One output from the sandbox, rebuilt from checked fields only."""
    if not isinstance(raw, dict):
        return _new_output("stream", name="stderr", text="[unreadable output]\n")
    kind = raw.get("output_type")
    if kind == "stream":
        name = "stderr" if raw.get("name") == "stderr" else "stdout"
        return _new_output("stream", name=name, text=_text(raw.get("text", ""), limit))
    if kind == "error":
        trace = raw.get("traceback")
        lines = [_text(x, limit) for x in trace[:200]] if isinstance(trace, list) else []
        return _new_output(
            "error",
            ename=_text(raw.get("ename", "Error"), 200),
            evalue=_text(raw.get("evalue", ""), limit),
            traceback=lines,
        )
    if kind in ("display_data", "execute_result"):
        fields: dict[str, Any] = {
            "data": _bundle(raw.get("data"), limit),
            "metadata": _image_metadata(raw.get("metadata")),
        }
        if kind == "execute_result":
            count = raw.get("execution_count")
            fields["execution_count"] = count if _counted(count) else None
        return _new_output(kind, **fields)
    return _new_output("stream", name="stderr", text="[unreadable output]\n")


def _size(value: object) -> int:
    """The bytes of text an output holds (as the cap inside the sandbox counts them)."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "replace"))
    if isinstance(value, dict):
        return sum(_size(v) for v in value.values())
    if isinstance(value, list):
        return sum(_size(v) for v in value)
    return 8


CAP_SLACK = 8192  # the note of the cap inside, and a last error it lets through


def _within(outputs: list[NotebookNode], limit: int) -> list[NotebookNode]:
    """A cell's outputs, cut where they pass `limit` bytes in all: the cap inside the sandbox
    runs beside student code, which can change it."""
    kept: list[NotebookNode] = []
    used = 0
    for output in outputs:
        used += _size(output)
        if used > limit + CAP_SLACK:
            kept.append(_note_output(f"[output truncated: a cell may show at most {limit} bytes]"))
            break
        kept.append(output)
    return kept


def _runs(cell: NotebookNode) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return cell.cell_type == "code" and bool(cell.source.strip()) and "skip-execution" not in tags


def _note_output(text: str) -> NotebookNode:
    return _new_output("stream", name="stderr", text=text + "\n")


class _Runner:
    """The cell process: started on demand, restarted after a death, earlier cells replayed."""

    def __init__(
        self, limits: Limits, unsandboxed: bool, hide: Sequence[Path], run: NotebookRun
    ) -> None:
        self.limits = limits
        self.unsandboxed = unsandboxed
        self.hide = hide
        self.run = run
        self.process: Confined | None = None
        self.done: list[tuple[str, int]] = []  # (source, execution count) that ran to the end
        self.spent = 0.0  # CPU seconds of the processes that ended

    def used_up(self) -> bool:
        """Whether the notebook's processes have used its CPU time budget."""
        now = self.process.cpu_used if self.process is not None else 0.0
        return self.spent + now >= self.limits.notebook_timeout

    def _start(self, deadline: float) -> Confined:
        settings = {"cell_output_bytes": self.limits.cell_output_bytes}
        left = self.limits.notebook_timeout - self.spent  # (a cell starts only with time left)
        process = Confined(
            "cells.py", settings, self.limits, self.unsandboxed, self.hide, cpu_budget=left
        )
        self.run.processes += 1
        process.start(deadline)
        for source, count in self.done:  # bring a fresh process to where the last one was
            self._send(process, source, count, deadline, silent=True)
        return process

    def _send(
        self, process: Confined, source: str, count: int, deadline: float, silent: bool = False
    ) -> dict[str, Any]:
        timeout = self.limits.notebook_cell_timeout
        request = {"op": "run", "source": source, "execution_count": count, "timeout": timeout}
        request["wall"] = self.limits.backstop(timeout)
        request["idle"] = self.limits.idle_share
        request["silent"] = silent
        reply, _ = process.request(request, timeout=timeout, deadline=deadline)
        return reply

    def cell(self, source: str, count: int, deadline: float) -> dict[str, Any]:
        if self.process is None:
            self.process = self._start(deadline)
        reply = self._send(self.process, source, count, deadline)
        if not reply.get("interrupted"):  # a replay must not hang on it again
            self.done.append((source, count))
        return reply

    def close(self) -> None:
        if self.process is not None:
            self.process.close(grace=PACING.end_grace)
            self.spent += self.process.cpu_used
            self.process = None


def _out_of_time(
    cell: NotebookNode, what: str, count: int | None, limits: Limits, run: NotebookRun
) -> None:
    """A cell the notebook's time budget did not reach (or ran out in)."""
    spent = f"{limits.notebook_timeout:g} s"
    cell.outputs = [_note_output(f"({what}: the notebook used up its {spent})")]
    cell.execution_count = count
    run.out_of_time = True


def execute_notebook(
    nb: NotebookNode,
    limits: Limits | None = None,
    unsandboxed: bool = False,
    hide: Sequence[Path] = (),
) -> NotebookRun:
    """Run `nb`'s code cells in the sandbox and write their outputs into `nb` (in place)."""
    limits = limits or Limits()
    run = NotebookRun()
    deadline = time.monotonic() + limits.backstop(limits.notebook_timeout)
    runner = _Runner(limits, unsandboxed, list(hide), run)
    total = 0
    count = 0
    try:
        for index, cell in enumerate(nb.cells):
            if not _runs(cell):
                continue
            count += 1
            if time.monotonic() >= deadline or runner.used_up():
                _out_of_time(cell, "not run", None, limits, run)
                continue
            try:
                reply = runner.cell(cell.source, count, deadline)
            except Died as exc:
                runner.close()
                if time.monotonic() >= deadline or runner.used_up():
                    _out_of_time(cell, "stopped", count, limits, run)
                    continue
                if run.died_at is None:
                    run.died_at = index
                stopped = "stopped after" in str(exc)
                cell.outputs = [
                    _new_output(
                        "error",
                        ename="CellTimeoutError" if stopped else "DeadKernelError",
                        evalue=f"the notebook's process {exc} while running this cell",
                        traceback=[],
                    )
                ]
                cell.execution_count = count
                run.notes.append(f"cell {index} {exc}")
                continue
            outputs = reply.get("outputs")
            outputs = outputs if isinstance(outputs, list) else []
            cell.outputs = [inert_output(o, limits.cell_output_bytes) for o in outputs[:1000]]
            cell.outputs = _within(cell.outputs, limits.cell_output_bytes)
            total += len(json.dumps(cell.outputs))
            if total > limits.notebook_output_bytes:
                cell.outputs = [
                    _note_output(
                        f"[outputs removed: the notebook's outputs passed "
                        f"{limits.notebook_output_bytes} bytes]"
                    )
                ]
            cell.execution_count = count
    finally:
        runner.close()
    return run
