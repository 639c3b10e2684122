"""What the test run's processes share: the xdist workers of one `pytest -n N` run (or the one
process of a run without xdist) compute an expensive fixture's value once, and clean up after it
only when the whole run is over.

`once(name, make)` runs `make()` in the first process that asks and stores its (picklable)
value, or its failure, in a folder of this run under the temporary folder; the others wait on a
file lock (fcntl.flock) and read it. `at_end(path)` asks for a folder to be removed at the end of
the run: by the controller (or the process of a run without xdist) in its pytest_sessionfinish,
after every worker has finished (`finish`).
"""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import tempfile
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")

_folder: Path | None = None
_controller = False


def configure(config: pytest.Config) -> None:
    """Find this run's folder (call from pytest_configure). A worker has xdist's test run uid
    (PYTEST_XDIST_TESTRUNUID); the controller gives its workers one it knows (--testrunuid) if
    none was given; a run without xdist makes its own."""
    global _folder, _controller
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        uid = workerinput["testrunuid"]
    else:
        _controller = True
        uid = getattr(config.option, "testrunuid", None) or uuid.uuid4().hex
        if hasattr(config.option, "testrunuid"):  # xdist is installed: its workers get this uid
            config.option.testrunuid = uid
    _folder = Path(tempfile.gettempdir()) / f"attention-course-run-{uid}"


def folder() -> Path:
    assert _folder is not None, "tests.shared.configure was not called"
    _folder.mkdir(mode=0o700, exist_ok=True)
    return _folder


class _Failed:
    def __init__(self, skipped: bool, text: str):
        self.skipped, self.text = skipped, text


def once(name: str, make: Callable[[], T]) -> T:
    """make()'s value, computed by one process of the run and read by the others. If make()
    failed (or skipped) there, it fails (or skips) here too, with its message, without running
    again."""
    base = folder()
    value = base / f"{name}.pickle"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not value.exists():
            try:
                result: object = make()
            except (Exception, pytest.fail.Exception, pytest.skip.Exception) as exc:
                text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                failed = _Failed(isinstance(exc, pytest.skip.Exception), text)
                _store(value, failed)
                raise
            _store(value, result)
            return result  # type: ignore[return-value]
    result = pickle.loads(value.read_bytes())
    if isinstance(result, _Failed):
        if result.skipped:
            pytest.skip(result.text)
        pytest.fail(f"{name} failed in another worker of this run:\n{result.text}", pytrace=False)
    return result


def _store(path: Path, value: object) -> None:
    partial = path.with_suffix(".partial")
    partial.write_bytes(pickle.dumps(value))
    partial.replace(path)


def at_end(path: Path) -> None:
    """Remove `path` (a folder) when the whole run is over."""
    base = folder()
    with open(base / "at-end.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(base / "at-end", "a") as listing:
            listing.write(os.fspath(path) + "\n")


def finish() -> None:
    """At the end of the run, in the controller (or a run without xdist): remove what at_end
    was given, and the run's folder. Workers do nothing."""
    if not _controller or _folder is None or not _folder.exists():
        return
    listing = _folder / "at-end"
    if listing.exists():
        for line in listing.read_text().splitlines():
            shutil.rmtree(line, ignore_errors=True)
    shutil.rmtree(_folder, ignore_errors=True)
