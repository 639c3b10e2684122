"""Stand-ins for bubblewrap, put first on PATH for one test: one that is slow to start (a
loaded machine), one that cannot make a sandbox here (no user namespaces) and one whose
placeholder says something other than that it is ready. The machine's
sandbox is probed before either is put there (the probe is kept: it saw the real one)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from attention_course.sandbox import confined

# Starts the real bubblewrap only after two minutes (far longer than any start-up is given).
SLOW = """#!/bin/sh
sleep 120
exec {bwrap} "$@"
"""

# Makes no sandbox, and says why on its last line of several.
REFUSING = """#!/bin/sh
echo "bwrap: a warning that is not the reason" >&2
echo "bwrap: another line before the reason" >&2
echo "bwrap: No permissions to create new namespace, likely because the kernel does not \\
allow non-privileged user namespaces" >&2
exit 1
"""


def says_instead(words: str) -> str:
    """A placeholder with a process of its own (one a program could be forked beside) that
    says `words` instead of that it is ready, and goes on running."""
    return f'#!/bin/sh\nsleep 120 &\necho "{words}"\nwait\n'


def put_on_path(script: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`script` (SLOW, REFUSING or one `says_instead` made) is the bubblewrap grading runs
    until the test ends."""
    confined.require()
    found = folder / "bin"
    found.mkdir()
    (found / "bwrap").write_text(script.format(bwrap=shutil.which("bwrap")))
    (found / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{found}{os.pathsep}{os.environ['PATH']}")
