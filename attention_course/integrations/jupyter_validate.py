"""JupyterLab's Validate button with a short answer: the failing check and its message first.

nbgrader's Validate dialog shows, for every failing test cell, the cell's whole source and then
the whole traceback, so the one useful sentence (the assertion's hint) comes after some 35 lines.
`ShortValidator` answers with the statement that failed (and, when the error came from inside a
student's function, the line there) and the error's one-line message, such as
`AssertionError: each row (slice along axis=-1) must sum to 1`.

nbgrader's dialog shows each block as unwrapped preformatted text in a dialog at least as wide as
its longest line, so a long hint is cut off at the dialog's edge (or the window's). The error
nbgrader shows is HTML; `WRAP_STYLE` leads it, so that the dialog's lines wrap at its width and
the dialog fits the window.

Two things the notebook's run cannot tell, it says too. An endless loop (or far too slow code)
is said as a timeout, where the cell was stopped, and Validate stops there: the cells after it
are listed as not run, instead of each waiting out its own timeout. The graded quiz's answers
are read, not run, by its grader, so a run passes whatever they hold: `quiz_answer_problems`
reads each answer cell as the grader will (a literal `answer = ...`, in the form its question
takes: quiz/answer_form.py) and names each answer that would earn nothing for its form, before
the student submits.

Enabled as a Jupyter server extension
(`attention_course.integrations.jupyter_validate`, see the student
configuration in student_config.py), it makes nbgrader's Validate handler use
`ShortValidator`; the request, the dialog and the verdict are nbgrader's own.
"""

from __future__ import annotations

import ast
import html
import re

from nbconvert.filters import strip_ansi
from nbformat.notebooknode import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, Execute
from nbgrader.validator import Validator

from attention_course.grading.notebook import parse_source
from attention_course.grading.quiz_answers import NotALiteral, read_answer
from attention_course.quiz.answer_form import FORM_KEY, META_KEY, NO_ANSWER, form_problem

# The first line of a traceback frame that IPython prints for notebook code.
_FRAME = re.compile(r"^Cell In\[(\d+)\], line (\d+)(?:, in (\w+))?")
MAX_STATEMENT_LINES = 4
# Every block of the Validate dialog wraps at the dialog's width, and the dialog fits the window.
WRAP_STYLE = (
    "<style>#validation-message pre { white-space: pre-wrap; overflow-wrap: anywhere; }"
    " .jp-Dialog-content:has(#validation-message)"
    " { max-width: min(1000px, calc(100vw - 32px)); }</style>"
)


def _statement_at(source: str, line: int) -> str:
    """The innermost statement of `source` that spans `line` (1-based), or that line alone."""
    lines = source.splitlines()
    try:
        tree = parse_source(source)
    except SyntaxError:  # also what the parser cannot take (too deep)
        tree = None
    best: tuple[int, int] | None = None  # (first line, last line)
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            span = (node.lineno, node.end_lineno or node.lineno)
            # a compound statement (with, for, if) is only used when no smaller one fits
            if best is None or (span[1] - span[0]) <= (best[1] - best[0]):
                best = span
    if best is None:
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""
    start, end = best[0], min(best[1], best[0] + MAX_STATEMENT_LINES - 1)
    text = "\n".join(lines[start - 1 : end])
    if end < best[1]:
        text += "\n..."
    indent = min(len(ln) - len(ln.lstrip()) for ln in lines[start - 1 : end] if ln.strip())
    return "\n".join(ln[indent:] for ln in text.splitlines())


def _frames(traceback: list[str]) -> list[tuple[int, int, str | None]]:
    """(execution count, line, function or None) of each notebook frame, outermost first."""
    found = []
    for entry in traceback:
        match = _FRAME.match(strip_ansi(entry).lstrip())
        if match:
            found.append((int(match.group(1)), int(match.group(2)), match.group(3)))
    return found


def _cell_name(cell: NotebookNode) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id") or "cell"


def _indent(text: str) -> str:
    return "\n".join("    " + ln for ln in text.splitlines())


# The error nbclient records for a cell that ran past its timeout (the kernel was interrupted:
# the cell's own error is a KeyboardInterrupt the student never pressed), and the one
# `StopAfterTimeout` gives the cells it did not run.
TIMEOUT_ERROR = "CellTimeoutError"
NOT_RUN_ERROR = "NotRun"


def _timeout_message(timeout: int | None) -> str:
    limit = f"{timeout} s" if timeout else "its time limit"
    return (
        f"Timed out: this cell ran longer than {limit} and was stopped. An endless loop, or "
        "far more work than the checks need? Validate did not run the cells after it."
    )


def short_failure(
    cell: NotebookNode, cells_by_count: dict[int, NotebookNode], timeout: int | None = None
) -> tuple[str, str] | None:
    """(where, message) for a failed cell: the statement that failed, and the error's line.
    A cell that timed out says so, and where it was stopped (`timeout`: its limit, seconds).

    `None` when the cell has no error output (stderr or partial credit: nbgrader's own words).
    """
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not errors:
        return None
    error = errors[0]
    message = f"{error.ename}: {error.evalue}" if error.get("evalue") else error.ename
    if any(o.get("ename") == NOT_RUN_ERROR for o in errors):
        return f"{_cell_name(cell)}:", str(error.evalue)
    timed_out = any(o.get("ename") == TIMEOUT_ERROR for o in errors)
    if timed_out:
        message = _timeout_message(timeout)
    frames = _frames(error.get("traceback", []))
    here = [f for f in frames if f[0] == cell.get("execution_count")]
    if not here:  # a syntax error, or a traceback without frames
        return f"{_cell_name(cell)}:", message
    _, line, _ = here[0]
    where = f"{_cell_name(cell)}, line {line}:\n{_indent(_statement_at(cell.source, line))}"
    count, inner_line, function = frames[-1]
    inner = cells_by_count.get(count)
    if inner is not None and inner is not cell:
        name = function or _cell_name(inner)
        statement = _statement_at(inner.source, inner_line)
        verb = "stopped" if timed_out else "raised"
        where += f"\n{verb} in {name}, line {inner_line}:\n{_indent(statement)}"
        if error.ename == "NotImplementedError" and not error.get("evalue"):
            message += f": {name} is not written yet (replace its raise NotImplementedError())"
    return where, message


class StopAfterTimeout(Execute):
    """nbgrader's Execute that runs no code cell after one that timed out: each is given a
    `NotRun` error that says why (so a test cell after it fails, never passes unseen), and the
    student waits for one timeout, not one per cell."""

    def preprocess(self, nb, resources=None, km=None):
        self._stopped_by: str | None = None
        return super().preprocess(nb, resources, km)

    def preprocess_cell(self, cell, resources, index):
        if getattr(self, "_stopped_by", None) and cell.cell_type == "code":
            said = f"Not run: Validate stopped after {self._stopped_by} timed out."
            cell.outputs = [new_output("error", ename=NOT_RUN_ERROR, evalue=said, traceback=[])]
            return cell, resources
        cell, resources = super().preprocess_cell(cell, resources, index)
        outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
        if any(o.get("ename") == TIMEOUT_ERROR for o in outputs):
            self._stopped_by = _cell_name(cell)
        return cell, resources


def _question_title(nb: NotebookNode, index: int) -> str:
    """The heading of the question whose answer cell is `index` ("Question 1.2: ... (2
    points)"): the nearest markdown heading above it, else the cell's name."""
    for cell in reversed(nb.cells[:index]):
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return _cell_name(nb.cells[index])


def _is_answer_cell(cell: NotebookNode) -> bool:
    nbgrader = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and (
        FORM_KEY in cell.get("metadata", {}).get(META_KEY, {})
        or (nbgrader.get("solution") and str(nbgrader.get("grade_id", "")).endswith("__answer"))
    )


def quiz_answer_problems(nb: NotebookNode) -> list[tuple[str, str]]:
    """(where, message) for each answer cell of a graded quiz that its grader would score 0 for
    its form: no literal `answer = ...`, no answer, or one its question's form refuses (a
    letter that is no choice, a list for a single choice, ...). Right or wrong is not said:
    the key is not in the notebook. An answer cell without its form (a notebook released
    before answer cells carried it) is only read as a literal."""
    found = []
    for index, cell in enumerate(nb.cells):
        if not _is_answer_cell(cell):
            continue
        try:
            value = read_answer(cell.source)
        except NotALiteral as exc:
            said: str | None = f"Invalid answer: {exc}."
        else:
            form = cell.metadata.get(META_KEY, {}).get(FORM_KEY)
            if value is None:
                said = NO_ANSWER
            else:
                said = form_problem(form, value) if isinstance(form, dict) else None
        if said is None:
            continue
        lines = [ln for ln in cell.source.splitlines() if ln.strip().startswith("answer")]
        shown = _indent(lines[-1].strip()) if lines else "    (no answer = ... line)"
        where = f"{_question_title(nb, index)}, {_cell_name(cell)}:\n{shown}"
        found.append((where, f"{said}\n\n(The graders read this cell, they do not run it.)"))
    return found


class ShortValidator(Validator):
    """nbgrader's Validator whose failed cells read `where` and a one-line `error`, a timeout
    said as one, and a quiz's answers that cannot be graded named."""

    preprocessors = [CheckCellMetadata, ClearOutput, StopAfterTimeout]

    def _get_failed_cells(self, nb: NotebookNode) -> list[NotebookNode]:
        failed = super()._get_failed_cells(nb)
        self._failed_cells = failed
        self._cells_by_count = {
            c.execution_count: c
            for c in nb.cells
            if c.cell_type == "code" and c.get("execution_count") is not None
        }
        return failed

    def _preprocess(self, nb: NotebookNode) -> NotebookNode:
        self._quiz_problems = quiz_answer_problems(nb)  # the cells as the student wrote them
        return super()._preprocess(nb)

    def validate(self, filename: str) -> dict:
        self._failed_cells, self._cells_by_count = [], {}
        self._quiz_problems = []
        results = super().validate(filename)
        timeout = self.config.Execute.get("timeout", Execute.timeout.default_value)
        for entry, cell in zip(results.get("failed", []), self._failed_cells, strict=False):
            short = short_failure(cell, self._cells_by_count, timeout)
            if short is None:
                entry["source"] = f"{_cell_name(cell)}:\n{_indent(cell.source.strip())}"
                entry["error"] = WRAP_STYLE + entry.get("error", "")
                continue
            where, message = short
            raw = f"{message}\n\n(Run the cell to see the full traceback.)"
            entry.update(source=where, raw_error=raw, error=WRAP_STYLE + html.escape(raw))
        if self._quiz_problems and not (results.get("changed") or results.get("type_changed")):
            failed = results.setdefault("failed", [])
            for where, raw in self._quiz_problems:
                error = WRAP_STYLE + html.escape(raw)
                failed.append({"source": where, "raw_error": raw, "error": error})
        return results


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "attention_course.integrations.jupyter_validate"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Make nbgrader's Validate handler (/assignments/validate) use ShortValidator."""
    from nbgrader.server_extensions.validate_assignment import handlers

    handlers.Validator = ShortValidator
    serverapp.log.info("attention_course: Validate answers with the failing check first")
