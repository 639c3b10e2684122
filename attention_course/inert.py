"""Text that student code wrote, made inert for where it lands: Markdown, CSV cells.

A failure message quotes what student code raised or returned, a student id is a folder's name:
either may hold Markdown (`![x](http://...)` loads an image when the file is viewed,
`[Click here](http://...)` is a link), HTML, or a spreadsheet formula. Where such text lands, it
is shown as the characters it is, never as a link, an image, markup or a formula. (HTML pages
escape it with the template's autoescaping; Gradescope's results.json declares its outputs
plain text: GRADESCOPE_PLAIN_TEXT.)
"""

from __future__ import annotations

import io
import re
import string
from collections.abc import Iterable
from typing import TextIO

# Gradescope renders an output as "simple_format" unless told otherwise (its HTML sanitised,
# links and images kept): results.json says that every output is plain text.
GRADESCOPE_PLAIN_TEXT = {
    "output_format": "text",
    "test_output_format": "text",
    "test_name_format": "text",
}
# OWASP's list (CSV injection): a cell starting with one of these may be read as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_PUNCTUATION = frozenset(string.punctuation)


def markdown_text(text: object) -> str:
    """`text` as plain Markdown text, on one line (in a table cell or a list item): every ASCII
    punctuation character escaped with a backslash (CommonMark's escapes; GFM's for `|`), so
    that none starts a link, an image, emphasis, code, HTML, an entity, a formula (`$`), a new
    table cell or an autolink (`http\\://`, `www\\.`, `a\\@b`). Rendered, it is the text."""
    text = " ".join(str(text).split())
    return "".join(f"\\{c}" if c in _PUNCTUATION else c for c in text)


def csv_cell(value: object) -> object:
    """A CSV cell that no spreadsheet reads as a formula: text starting with one of
    FORMULA_STARTS gets a leading apostrophe (OWASP's advice), unless it is a plain number
    (a negative score stays a number). Numbers and other values pass as they are."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    return value if _NUMBER.fullmatch(value) else "'" + value


def csv_row(values: Iterable[object]) -> list[object]:
    """Every cell of a row made inert (csv_cell)."""
    return [csv_cell(v) for v in values]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(text: object) -> str:
    """`text` as a terminal shows it, its lines and tabs kept: every other control character
    (an escape sequence's start, a carriage return that overwrites a line) written as its
    Python escape (`\\x1b`), so that no text moves the cursor, recolours or retitles."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], str(text))


class InertStream(io.TextIOBase):
    """A text stream whose every write passes through terminal_text: what the command line
    prints (a feedback line quoting a student's exception, a student id, an error) never moves
    the cursor, recolours, retitles or writes the clipboard. `raw` is the stream beneath, for
    the one writer of escape sequences of its own (cli/progress.py's bar)."""

    def __init__(self, raw: TextIO):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_text(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", "utf-8")

    def writable(self) -> bool:
        return True
