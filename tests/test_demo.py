"""The README's main job, `attention-course demo`, as a new user runs it: it grades its class in
a course folder of its own and leaves this repository exactly as it found it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from attention_course.assignments import ALL_ASSIGNMENTS, COURSE_ROOT

SKIP = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache"}


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file of the repository (but the environment and caches): size and mtime."""
    found = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if SKIP & set(rel.parts) or any(p.endswith(".egg-info") for p in rel.parts):
            continue
        if path.is_file():
            stat = path.stat()
            found[str(rel)] = (stat.st_size, stat.st_mtime_ns)
    return found


def test_the_demo_grades_its_class_and_leaves_the_repository_as_it_was():
    before = snapshot(COURSE_ROOT)
    git = shutil.which("git") and (COURSE_ROOT / ".git").exists()
    status = ["git", "-C", str(COURSE_ROOT), "status", "--porcelain"]
    git_before = subprocess.run(status, capture_output=True, text=True).stdout if git else ""
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "attention-course"), "demo"],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    folder = re.search(r"own course folder .*?: (\S+)", proc.stdout).group(1)
    try:
        assert not Path(folder).is_relative_to(COURSE_ROOT)
        for assignment in ALL_ASSIGNMENTS:
            assert f"{assignment}: scores stored in the gradebook" in proc.stdout
        assert "demo-instructor" in proc.stdout and "demo-broken: not graded" in proc.stdout
        assert snapshot(COURSE_ROOT) == before  # no gradebook, student folder or export
        if git:
            assert subprocess.run(status, capture_output=True, text=True).stdout == git_before
    finally:
        shutil.rmtree(Path(folder).parent, ignore_errors=True)
