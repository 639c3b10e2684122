"""nbgrader preprocessors: grade outside the kernel, and survive a kernel that dies.

`SafeExecute` is nbgrader's `Execute` that records a dead kernel (say `os._exit` in a cell)
instead of failing the whole submission. `GradeOutOfKernel` runs after it: for every grade cell
whose hidden part names a grader (`# grader: grader_tests/test_<function>.py`), it grades the
submission once with `grading.grade_file` (student code in its own worker, comparisons in a
pytest process that never runs student code) and REPLACES that cell's outputs with PASS/FAIL lines
and the score as a plain float, which `SaveAutoGrades` then stores. Whatever the kernel printed or
displayed in a grade cell is discarded, so nothing a student cell does in the kernel can change a
score.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Integer, Unicode

from attention_course.assignments import SETUP_CELL_ID, graded_course
from attention_course.grading import GradeReport, grade_file

GRADER_LINE = re.compile(r"^# grader: grader_tests/test_(\w+)\.py\s*$", re.MULTILINE)
# Key of the grade cell's score output metadata that holds the grader tests behind the score
# (test, description, points, passed, message each), for class reports.
RECORD_KEY = "attention_course"


class SandboxedKernelManager(AsyncKernelManager):
    """Starts the kernel through `kernel_sandbox` (limits, and bubblewrap where installed)."""

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments) + ["--IPKernelApp.log_level=ERROR"]
        return [sys.executable, "-m", "attention_course.kernel_sandbox", "--", *cmd]


class SafeExecute(Execute):
    """Execute in a sandboxed kernel, within a time budget for the whole notebook.

    A kernel death (say `os._exit` in a cell) is recorded on its cell and grading goes on; once
    the budget is spent, the remaining cells are not run. Neither changes a score: the graded
    functions run again in the grading worker.
    """

    total_timeout = Integer(
        60, help="Seconds for executing the whole notebook; later cells are skipped"
    ).tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess_cell(self, cell, resources, index):
        self._attention_index = index
        if cell.cell_type == "code" and time.monotonic() - self._attention_start > (
            self.total_timeout
        ):
            cell.outputs = [
                nbformat.v4.new_output(
                    "stream",
                    name="stdout",
                    text=f"(not run: the notebook used up its {self.total_timeout} s)\n",
                )
            ]
            resources.setdefault("attention_course", {})["out_of_time"] = True
            return cell, resources
        return super().preprocess_cell(cell, resources, index)

    def preprocess(self, nb, resources=None, km=None):
        self._attention_index = None
        self._attention_start = time.monotonic()
        try:
            return super().preprocess(nb, resources, km)
        except DeadKernelError:
            index = self._attention_index
            where = f"cell {index}" if index is not None else "start-up"
            self.log.warning("The kernel died while running %s; grading goes on", where)
            if index is not None:
                nb.cells[index].outputs.append(
                    nbformat.v4.new_output(
                        "error",
                        ename="DeadKernelError",
                        evalue="the kernel died while running this cell (os._exit or a crash?)",
                        traceback=[],
                    )
                )
            resources.setdefault("attention_course", {})["kernel_died"] = where
            return nb, resources


def grader_cells(nb: NotebookNode) -> dict[int, str]:
    """Grade cells that name an out-of-kernel grader: cell index -> function."""
    found = {}
    for index, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade"):
            match = GRADER_LINE.search(cell.source)
            if match:
                found[index] = match.group(1)
    return found


def cell_feedback(report: GradeReport, function: str, extra: list[str] = ()) -> str:
    lines = [
        f"{function}: {report.functions[function].score:g} / "
        f"{report.functions[function].max_score:g} points (graded outside your kernel)"
    ]
    lines.append(report.functions[function].feedback())
    for err in report.cell_errors:
        if err["cell_id"] in (function, SETUP_CELL_ID):
            lines.append(
                f"NOTE the cell {err['cell_id']!r} raised {err['error_type']}: "
                f"{err['error_message']}"
            )
    lines += [f"NOTE {line}" for line in extra]
    return "\n".join(lines) + "\n"


def cell_score(points: float, report: GradeReport, function: str) -> float:
    """The cell's points in proportion to the points of the grader's tests passed."""
    f = report.functions[function]
    return round(points * f.score / f.max_score, 6) if f.max_score else 0.0


class GradeOutOfKernel(NbGraderPreprocessor):
    """Run the hidden graders in their own processes and write each grade cell's outputs."""

    isolate = Unicode("auto", help="Worker sandbox: auto, bwrap or none").tag(config=True)

    def preprocess(self, nb, resources):
        cells = grader_cells(nb)
        if not cells:
            return nb, resources
        assignment = resources["nbgrader"]["assignment"]
        with tempfile.TemporaryDirectory(prefix="attention-autograde-") as tmp:
            path = Path(tmp) / f"{resources['nbgrader']['notebook']}.ipynb"
            nbformat.write(nb, path)
            report = grade_file(
                path,
                assignment,
                self.isolate,
                functions=sorted(set(cells.values())),
                hide=graded_course(Path(resources.get("metadata", {}).get("path") or ".")),
            )
        extra = []
        died = resources.get("attention_course", {}).get("kernel_died")
        if died:
            extra.append(
                f"the notebook's kernel died at {died}; your functions were still "
                "graded in a separate process"
            )
        for index, function in cells.items():
            cell = nb.cells[index]
            points = float(cell.metadata["nbgrader"].get("points", 0))
            score = cell_score(points, report, function)
            tests = [asdict(t) for t in report.functions[function].tests]
            cell.outputs = [
                nbformat.v4.new_output(
                    "stream", name="stdout", text=cell_feedback(report, function, extra)
                ),
                nbformat.v4.new_output(
                    "execute_result",
                    data={"text/plain": repr(score)},
                    metadata={RECORD_KEY: {"tests": tests}},
                    execution_count=cell.get("execution_count"),
                ),
            ]
        self.log.info(
            "Graded %s outside the kernel: %g / %g", assignment, report.score, report.max_score
        )
        return nb, resources
