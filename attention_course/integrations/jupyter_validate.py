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
from nbgrader.validator import Validator

from attention_course.grading.notebook import parse_source

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


def short_failure(
    cell: NotebookNode, cells_by_count: dict[int, NotebookNode]
) -> tuple[str, str] | None:
    """(where, message) for a failed cell: the statement that failed, and the error's line.

    `None` when the cell has no error output (stderr or partial credit: nbgrader's own words).
    """
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not errors:
        return None
    error = errors[0]
    message = f"{error.ename}: {error.evalue}" if error.get("evalue") else error.ename
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
        where += f"\nraised in {name}, line {inner_line}:\n{_indent(statement)}"
        if error.ename == "NotImplementedError" and not error.get("evalue"):
            message += f": {name} is not written yet (replace its raise NotImplementedError())"
    return where, message


class ShortValidator(Validator):
    """nbgrader's Validator whose failed cells read `where` and a one-line `error`."""

    def _get_failed_cells(self, nb: NotebookNode) -> list[NotebookNode]:
        failed = super()._get_failed_cells(nb)
        self._failed_cells = failed
        self._cells_by_count = {
            c.execution_count: c
            for c in nb.cells
            if c.cell_type == "code" and c.get("execution_count") is not None
        }
        return failed

    def validate(self, filename: str) -> dict:
        self._failed_cells, self._cells_by_count = [], {}
        results = super().validate(filename)
        for entry, cell in zip(results.get("failed", []), self._failed_cells, strict=False):
            short = short_failure(cell, self._cells_by_count)
            if short is None:
                entry["source"] = f"{_cell_name(cell)}:\n{_indent(cell.source.strip())}"
                entry["error"] = WRAP_STYLE + entry.get("error", "")
                continue
            where, message = short
            raw = f"{message}\n\n(Run the cell to see the full traceback.)"
            entry.update(source=where, raw_error=raw, error=WRAP_STYLE + html.escape(raw))
        return results


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "attention_course.integrations.jupyter_validate"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Make nbgrader's Validate handler (/assignments/validate) use ShortValidator."""
    from nbgrader.server_extensions.validate_assignment import handlers

    handlers.Validator = ShortValidator
    serverapp.log.info("attention_course: Validate answers with the failing check first")
