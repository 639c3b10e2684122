"""The source notebooks follow the contract: cells named by function, points equal to graders."""

from __future__ import annotations

import importlib
import inspect

import nbformat
import numpy as np
import pytest

from attention_course.grading.harness import points_of
from attention_course.grading.notebook import program_cells
from attention_course.grading.preprocessors import GRADER_LINE
from tests.course import ASSIGNMENTS, COURSE_ROOT, SETUP_CELL_ID, grade_cell_id

NAMES = sorted(ASSIGNMENTS)


def source_notebook(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(COURSE_ROOT / "source" / assignment / f"{assignment}.ipynb", as_version=4)


def cells_by_id(nb) -> dict[str, nbformat.NotebookNode]:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}


def cell_points(assignment: str) -> dict[str, float]:
    cells = cells_by_id(source_notebook(assignment))
    return {
        f: float(cells[grade_cell_id(f)].metadata["nbgrader"]["points"])
        for f in ASSIGNMENTS[assignment].graded
    }


def grader_points(function: str) -> float:
    module = importlib.import_module(f"grader_tests.test_{function}")
    total = 0.0
    for name, obj in inspect.getmembers(module, inspect.isfunction):
        if name.startswith("test_"):
            total += points_of(obj)  # LookupError: a grader test without its points
    return total


@pytest.mark.parametrize("assignment", NAMES)
def test_each_graded_function_has_solution_and_locked_test_cell(assignment):
    cells = cells_by_id(source_notebook(assignment))
    assert cells[SETUP_CELL_ID].metadata["nbgrader"]["locked"]
    for function in ASSIGNMENTS[assignment].graded:
        solution = cells[function]
        assert solution.metadata["nbgrader"]["solution"]
        assert f"def {function}(" in solution.source
        assert "### BEGIN SOLUTION" in solution.source
        test = cells[grade_cell_id(function)]
        meta = test.metadata["nbgrader"]
        assert meta["grade"] and meta["locked"] and not meta["solution"]
        assert GRADER_LINE.search(test.source).group(1) == function
        hidden = test.source.split("### BEGIN HIDDEN TESTS")
        assert len(hidden) == 2 and hidden[0].strip(), "visible checks, then the hidden part"


@pytest.mark.parametrize("assignment", NAMES)
def test_cell_points_equal_grader_points(assignment):
    for function, points in cell_points(assignment).items():
        assert points == grader_points(function), function


def test_second_assignment_brings_its_own_helpers():
    cells = cells_by_id(source_notebook("masks_and_heads"))
    for helper in ASSIGNMENTS["masks_and_heads"].helpers:
        assert cells[helper].metadata["nbgrader"]["solution"], helper
        assert grade_cell_id(helper) not in cells


def _course_text_attention(Q, K, V):
    """The course text's own code (chapter, section 5), used to check the worked example."""

    def softmax(x, axis=-1):
        exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return exp_x / np.sum(exp_x, axis=axis, keepdims=True)

    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    attention_weights = softmax(scores)
    return attention_weights @ V, attention_weights


def test_worked_example_matches_the_course_text():
    """The notebook's seed-42 example, run with the instructor's solutions, prints the
    weights the course text's code prints."""
    nb = source_notebook("attention_basics")
    namespace: dict = {}
    for _, source in program_cells(nb):
        exec(source, namespace)
    example = next(
        c.source for c in nb.cells if c.cell_type == "code" and "np.random.seed(42)" in c.source
    )
    exec(example, namespace)
    np.random.seed(42)
    x = np.random.randn(3, 4)
    W_q, W_k, W_v = (np.random.randn(4, 4) * 0.5 for _ in range(3))
    out, weights = _course_text_attention(x @ W_q, x @ W_k, x @ W_v)
    assert np.allclose(namespace["weights"], weights)
    assert np.allclose(namespace["output"], out)
    # the numbers the notebook shows as the text's are what the text's code prints
    assert np.array_equal(namespace["text_weights"], np.round(weights, 3))


def test_worked_example_flags_weights_that_differ_from_the_text(capsys):
    """Without the scaling the example prints other weights, and the cell says they differ."""
    nb = source_notebook("attention_basics")
    namespace: dict = {}
    for _, source in program_cells(nb):
        exec(source, namespace)

    def unscaled(Q, K, V, mask=None):
        w = namespace["softmax"](Q @ np.swapaxes(K, -1, -2))
        return w @ V, w

    example = next(
        c.source for c in nb.cells if c.cell_type == "code" and "np.random.seed(42)" in c.source
    )
    exec(example, namespace)
    assert "They match the course text." in capsys.readouterr().out
    namespace["scaled_dot_product_attention"] = unscaled
    exec(example, namespace)
    assert "They do NOT match the course text" in capsys.readouterr().out
