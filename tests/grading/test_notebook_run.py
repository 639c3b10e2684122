"""The notebook run without a kernel writes the outputs a Jupyter kernel run writes.

Each notebook is executed twice: by `execute_notebook` (an IPython shell in the sandbox) and by
nbclient with a real ipykernel (the same matplotlib backend, the same per-cell time limit).
Their outputs must be equal: text, errors with IPython's tracebacks, displays, execution
counts, and figures where a notebook asks for them (byte for byte). Only what differs between
two kernel runs as well is set aside: the process id in the file names a kernel gives cells, and
where a kernel's stream buffering cuts a stream in two.
"""

from __future__ import annotations

import copy
import json
import os
import re

import nbformat
import pytest
from nbclient import NotebookClient

from attention_course.cli.samples import sample_notebooks
from attention_course.sandbox.execute import execute_notebook
from attention_course.settings import DEFAULT
from tests.course import ALL_ASSIGNMENTS, COURSE_ROOT

FEATURES = [
    "import numpy as np\nprint('hi')\n1 + 1",
    "import sys\nprint('err', file=sys.stderr)\nprint('out')",
    "def f(x):\n    return 1 / x\nf(0)",
    "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()",
    "from IPython.display import display\ndisplay({'text/plain': 'shown'}, raw=True)\nx = 3\nx",
    "!echo shell",
    "import warnings\nwarnings.warn('careful')",
    "%timeit -n1 -r1 pass",
    "raise ValueError('boom')",
    "for i in range(3):\n    print(i, end='\\r')",
    "undefined_name",
    "def broken(:\n    pass",
]


def _kernel_run(nb):
    before = os.environ.get("MPLBACKEND")
    os.environ["MPLBACKEND"] = "Agg"  # what the graded notebook run uses
    try:
        # A kernel's time limit is by the clock; ours is the cell's CPU time, with a backstop by
        # the clock: the kernel gets that backstop, so that a busy machine interrupts neither.
        NotebookClient(
            nb,
            timeout=int(DEFAULT.backstop(DEFAULT.notebook_cell_timeout)),
            interrupt_on_timeout=True,
            allow_errors=True,
            kernel_name="python3",
        ).execute()
    finally:
        if before is None:
            del os.environ["MPLBACKEND"]
        else:
            os.environ["MPLBACKEND"] = before
    return nb


TIMING = ("%timeit", "process_time(", "perf_counter(")  # cells whose numbers are measured


def _normal(outputs, source: str) -> list[dict]:
    """Outputs as comparable data: consecutive writes to one stream merged, the kernel's
    process id taken out of cell file names, and the text of a cell that measures time
    (numbers, and what it says about them, differ in any two runs) left out."""
    timing = any(t in source for t in TIMING)
    found: list[dict] = []
    for out in json.loads(json.dumps(outputs)):
        if out["output_type"] == "stream":
            out["text"] = re.sub(r"ipykernel_\d+", "ipykernel_PID", out["text"])
            if timing:
                out["text"] = "(measured)"
            if found and found[-1]["output_type"] == "stream" and found[-1]["name"] == out["name"]:
                found[-1]["text"] += out["text"]
                continue
        if out["output_type"] == "error":
            out["traceback"] = [
                re.sub(r"ipykernel_\d+", "ipykernel_PID", t) for t in out["traceback"]
            ]
        found.append(out)
    return found


def _compare(nb):
    ours = copy.deepcopy(nb)
    execute_notebook(ours)
    theirs = _kernel_run(copy.deepcopy(nb))
    for mine, kernel in zip(ours.cells, theirs.cells, strict=True):
        if mine.cell_type != "code":
            continue
        assert mine.get("execution_count") == kernel.get("execution_count"), mine.source[:60]
        assert _normal(mine.outputs, mine.source) == _normal(kernel.outputs, mine.source), (
            mine.source[:60]
        )


def test_every_kind_of_output_as_a_kernel_writes_it():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in FEATURES]
    _compare(nb)


@pytest.mark.parametrize("assignment", ALL_ASSIGNMENTS)
@pytest.mark.parametrize("student", ["demo-instructor", "demo-partial", "demo-stub"])
def test_the_demo_class_as_a_kernel_runs_it(assignment, student):
    _compare(sample_notebooks(assignment, COURSE_ROOT)[student])
