"""The npm packages the export tests run under node, installed once into .venv/node_tools.

scripts/setup.sh installs them too (the same list, node/packages.txt); a test that needs them
installs them when they are missing, with ``npm install --prefix``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.course import COURSE_ROOT

NODE_DIR = Path(__file__).resolve().parent / "node"
TOOLS = COURSE_ROOT / ".venv" / "node_tools"
PACKAGES = NODE_DIR.joinpath("packages.txt").read_text(encoding="utf-8").split()


def node_modules() -> Path:
    """The folder holding the packages: installed now if any is missing."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are needed for the export tests (apt-get install nodejs npm)")
    modules = TOOLS / "node_modules"
    wanted = {p.rsplit("@", 1)[0]: p.rsplit("@", 1)[1] for p in PACKAGES}
    have = {}
    for name in wanted:
        manifest = modules / name / "package.json"
        if manifest.is_file():
            have[name] = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    if have != wanted:
        cmd = [npm, "install", "--prefix", str(TOOLS), "--no-audit", "--no-fund", *PACKAGES]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            pytest.fail(f"npm install failed: {done.stderr.strip()[-500:]}")
    return modules


def run_node(script: str, data: Any, *args: str) -> Any:
    """Run node/<script> with ``data`` as JSON on stdin; its JSON output."""
    modules = node_modules()
    env = {
        "PATH": "/usr/bin:/bin",
        "GIFT_PEGJS": str(modules / "gift-pegjs"),
        "JSDOM": str(modules / "jsdom"),
    }
    done = subprocess.run(
        [shutil.which("node") or "node", str(NODE_DIR / script), *args],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)
