"""What the jail says and sets outside the sandbox itself: why bubblewrap made no sandbox (in one
line, with the fix where there is one), bubblewrap's version, matplotlib's font list built once
per machine, and the per-process limits of a program graded without a sandbox."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import pytest

from attention_course.sandbox import jail
from attention_course.sandbox.program import Call, run_program
from attention_course.settings import Limits

HINT = "allow unprivileged user namespaces"


def test_why_bubblewrap_made_no_sandbox_is_its_last_line_with_the_fix_for_namespaces():
    said = "bwrap: first\nbwrap: second\nbwrap: setting up uid map: Permission denied\n"
    got = jail.explain("exited with status 1", said)
    assert got.startswith(
        "bubblewrap cannot create a sandbox here (bwrap: setting up uid map: Permission denied); "
    )
    assert HINT in got and "sysctl -w kernel.unprivileged_userns_clone=1" in got


def test_a_reason_that_is_not_about_namespaces_gets_no_namespace_fix():
    got = jail.explain("exited", "bwrap: Can't mount proc on /newroot/proc: Device busy")
    assert got == "bubblewrap cannot create a sandbox here (bwrap: Can't mount proc on " + (
        "/newroot/proc: Device busy)"
    )


def test_with_nothing_on_stderr_the_reason_given_is_said():
    assert jail.explain("was stopped after 30 s", " \n") == (
        "bubblewrap cannot create a sandbox here (was stopped after 30 s)"
    )


def _on_path(folder: Path, monkeypatch: pytest.MonkeyPatch, script: str | None) -> None:
    """PATH of only `folder`, holding a `bwrap` that runs `script` (None: no bwrap at all)."""
    if script is not None:
        (folder / "bwrap").write_text(f"#!/bin/sh\n{script}\n")
        (folder / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))


@pytest.mark.parametrize(
    ("script", "version"),
    [
        ("echo 'bubblewrap 0.8.0'", "0.8.0"),
        ("echo", "?"),  # says nothing
        (None, "?"),  # not installed
    ],
)
def test_bubblewraps_version_is_its_last_word_or_a_question_mark(
    tmp_path, monkeypatch, script, version
):
    _on_path(tmp_path, monkeypatch, script)
    assert jail.bwrap_version() == version


def test_matplotlibs_font_list_is_built_once_in_the_users_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = jail.mpl_cache.__wrapped__()
    assert folder == tmp_path / ".cache" / "attention-course" / "matplotlib"
    built = sorted(folder.glob("fontlist-*.json"))
    assert len(built) == 1
    mtime = built[0].stat().st_mtime_ns
    assert jail.mpl_cache.__wrapped__() == folder  # there already: not built again
    assert built[0].stat().st_mtime_ns == mtime


def test_no_font_list_where_it_cannot_be_built_and_nothing_said_on_gradings_streams(
    tmp_path, monkeypatch, capfd
):
    """An interpreter that fails as it builds the list (saying why on its stderr): no list,
    sandboxes go without one, and its words stay its own (grading's output is not theirs)."""
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'cannot import matplotlib' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(broken))
    assert jail.mpl_cache.__wrapped__() is None
    assert capfd.readouterr() == ("", "")


READ_LIMITS = """
import resource

def limits():
    return [resource.getrlimit(getattr(resource, name))[0]
            for name in ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_CORE")]
"""


def test_a_program_graded_without_a_sandbox_still_has_its_per_process_limits():
    limits = Limits(memory_bytes=3 << 30, file_bytes=5 << 20)
    run = run_program([("cell", READ_LIMITS)], [Call("l", "limits")], limits, unsandboxed=True)
    got = run.outcomes["l"]
    assert got.status == "ok", got
    assert list(got.value) == [3 << 30, 5 << 20, 0]
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] != 5 << 20  # this process's are its own
