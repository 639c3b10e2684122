"""Progress of a long run: a bar with counts and ETA on a terminal, a plain line per item
otherwise (a log file, CI)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from attention_course.inert import terminal_text


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    def __init__(self, total: int, what: str = "submissions", stream: TextIO | None = None):
        self.total = total
        self.what = what
        # beneath the command line's InertStream: the bar's own escapes are written as they
        # are, and the names and notes it shows pass through terminal_text here
        self.stream: TextIO = stream or getattr(sys.stderr, "raw", None) or sys.stderr
        self.tty = self.stream.isatty()
        self.done = 0
        self.counts: dict[str, int] = {}
        self.start = time.monotonic()

    def _bar(self) -> str:
        width = 24
        filled = width * self.done // self.total if self.total else width
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else None
        counts = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))
        return (
            f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {self.what}"
            + (f" ({counts})" if counts else "")
            + (f", about {_clock(eta)} left" if eta is not None and self.done < self.total else "")
        )

    def started(self) -> None:
        if self.tty and self.total:
            self.stream.write("\r" + self._bar())
            self.stream.flush()

    def update(self, name: str, kind: str, detail: str = "") -> None:
        """One item finished: `kind` counts it (graded, not graded, ...), `detail` says more."""
        self.done += 1
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self.tty:
            self.stream.write("\r\033[K" + self._bar())
            if self.done == self.total:
                self.stream.write("\n")
        else:
            width = len(str(self.total))
            line = f"  {self.done:>{width}}/{self.total} {name}: {kind}"
            line += f" ({detail})" if detail else ""
            self.stream.write(terminal_text(line) + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own that does not break the bar."""
        if self.tty:
            self.stream.write("\r\033[K" + terminal_text(text) + "\n" + self._bar())
        else:
            self.stream.write(terminal_text(text) + "\n")
        self.stream.flush()
