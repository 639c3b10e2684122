"""axe-core, the accessibility checker, run in a page the browser tests opened.

scripts/setup.sh installs the npm package into .venv/node_tools; a test that needs it installs
it there when it is missing. It is added to the page under test by Playwright (the page itself
loads nothing), then `axe.run` checks the whole document.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.course import COURSE_ROOT

PACKAGE = "axe-core@4.10.3"  # the same as scripts/setup.sh
TOOLS = COURSE_ROOT / ".venv" / "node_tools"
SCRIPT = TOOLS / "node_modules" / "axe-core" / "axe.min.js"
# What the project allows in a page people read: no serious or critical violation.
BLOCKING = ("serious", "critical")

RUN = """async (context) => {
  const found = await axe.run(context ? document.querySelector(context) : document,
    {resultTypes: ['violations']});
  return found.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}"""


def axe_script() -> Path:
    """axe.min.js, installed now when missing."""
    if not SCRIPT.is_file():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is needed for axe-core (apt-get install npm; scripts/setup.sh)")
        cmd = [npm, "install", "--prefix", str(TOOLS), "--no-audit", "--no-fund", PACKAGE]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0 or not SCRIPT.is_file():
            pytest.fail(f"npm install {PACKAGE} failed: {done.stderr.strip()[-500:]}")
    return SCRIPT


def violations(page, known: frozenset[str] = frozenset(), context: str | None = None) -> list[dict]:
    """axe-core's violations of the page as it is now (or of the element `context` selects),
    serious and critical ones only, but for the rule ids in `known` (findings of upstream code
    the project does not make, each named where it is passed). axe is added to the page once."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(axe_script()))
    found = page.evaluate(RUN, context)
    return [v for v in found if v["impact"] in BLOCKING and v["id"] not in known]
