"""The quadratic-cost demo of masks_and_heads shows a slope near 2 even on a busy machine."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.notebook_runs import errors, execute, filled_release

# It fits a slope to timings: run after the other tests, with nothing else of ours beside it
# (scripts/test.sh); with the other tests running in parallel it flaked.
pytestmark = pytest.mark.alone


def test_cost_demo_slope_while_another_process_keeps_a_core_busy(tmp_path):
    """The executed demo prints its measured log-log slope; with a busy loop running beside it
    (as on a shared machine) the slope stays within 1.6-2.4 (quadratic = 2)."""
    nb = filled_release("masks_and_heads", demos=("demo-timing",))
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        execute(nb, tmp_path)
    finally:
        busy.kill()
        busy.wait()
    assert errors(nb) == {}
    cell = next(c for c in nb.cells if c.get("id") == "demo-timing")
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    found = re.search(r"measured log-log slope: (-?\d+\.\d+)", text)
    assert found, text
    slope = float(found.group(1))
    print(text)
    assert 1.6 <= slope <= 2.4, text
    assert any("image/png" in o.get("data", {}) for o in cell.outputs)
