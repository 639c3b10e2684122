"""The Validate button's short answer: the failing statement, then the error's one line."""

from __future__ import annotations

import nbformat
import pytest

from attention_course.cli.samples import sample_notebooks
from attention_course.integrations import jupyter_validate
from attention_course.integrations.jupyter_validate import (
    ShortValidator,
    _statement_at,
    short_failure,
)
from tests.course import COURSE_ROOT

CELL = """import warnings

x = compute()
assert x.shape == (3,), \\
    "x must have 3 entries"
with warnings.catch_warnings():
    warnings.simplefilter("error")
    y = compute(big=True)
"""


@pytest.mark.parametrize(
    "line, statement",
    [
        (3, "x = compute()"),
        (4, 'assert x.shape == (3,), \\\n    "x must have 3 entries"'),
        (5, 'assert x.shape == (3,), \\\n    "x must have 3 entries"'),
        (8, "y = compute(big=True)"),  # the innermost statement, not the whole `with`
    ],
)
def test_statement_at_a_line(line, statement):
    assert _statement_at(CELL, line) == statement


def test_a_cell_too_deep_for_the_parser_gives_its_line():
    deep = "x = " + "1+" * 3000 + "1\nassert x == 2"
    assert _statement_at(deep, 2) == "assert x == 2"


def _error_cell(source, count, ename, evalue, frames):
    cell = nbformat.v4.new_code_cell(source, execution_count=count)
    cell.metadata["nbgrader"] = {"grade_id": "f_tests", "grade": True}
    traceback = ["\x1b[31m-----\x1b[39m", f"\x1b[31m{ename}\x1b[39m  Traceback"]
    for c, line, func in frames:
        where = f", in \x1b[36m{func}\x1b[39m(z)" if func else ""
        traceback.append(
            f"\x1b[36mCell\x1b[39m \x1b[32mIn[{c}]\x1b[39m\x1b[32m, line {line}\x1b[39m{where}\n..."
        )
    traceback.append(f"\x1b[31m{ename}\x1b[39m: {evalue}")
    cell.outputs = [
        nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=traceback)
    ]
    return cell


def test_an_assertion_shows_its_statement_and_hint():
    cell = _error_cell(CELL, 7, "AssertionError", "x must have 3 entries", [(7, 4, None)])
    where, message = short_failure(cell, {7: cell})
    assert (
        where == 'f_tests, line 4:\n    assert x.shape == (3,), \\\n        "x must have 3 entries"'
    )
    assert message == "AssertionError: x must have 3 entries"


def test_an_error_inside_the_students_function_names_both_lines():
    student = nbformat.v4.new_code_cell("def compute(big=False):\n    raise NotImplementedError()")
    cell = _error_cell(CELL, 7, "NotImplementedError", "", [(7, 3, None), (5, 2, "compute")])
    where, message = short_failure(cell, {5: student, 7: cell})
    assert where.splitlines() == [
        "f_tests, line 3:",
        "    x = compute()",
        "raised in compute, line 2:",
        "    raise NotImplementedError()",
    ]
    assert message.startswith("NotImplementedError: compute is not written yet")


def test_a_cell_without_an_error_output_keeps_nbgraders_words():
    cell = nbformat.v4.new_code_cell("print(1)", execution_count=1)
    assert short_failure(cell, {1: cell}) is None


def test_the_validator_on_a_partly_wrong_notebook(tmp_path):
    path = tmp_path / "attention_basics.ipynb"
    nbformat.write(sample_notebooks("attention_basics", COURSE_ROOT)["demo-partial"], path)
    results = ShortValidator().validate(str(path))
    failed = results["failed"]
    names = [e["source"].split(",")[0] for e in failed]
    # the partly correct student's softmax and causal_mask are wrong, and attention uses both;
    # the failed cells come in notebook order
    released = nbformat.read(
        COURSE_ROOT / "release" / "attention_basics" / "attention_basics.ipynb", 4
    )
    order = [c.metadata.get("nbgrader", {}).get("grade_id") for c in released.cells]
    wrong = {"softmax_tests", "causal_mask_tests", "scaled_dot_product_attention_tests"}
    assert names == [name for name in order if name in wrong]
    for entry in failed:
        assert len(entry["source"].splitlines()) <= 6
        assert "Traceback" not in entry["raw_error"] and "\x1b[" not in entry["raw_error"]
    mask = failed[names.index("causal_mask_tests")]
    assert mask["raw_error"].startswith(
        "AssertionError: positions above the diagonal (future keys) must be True"
    )


def test_the_server_extension_gives_nbgraders_validate_handler_the_short_validator(monkeypatch):
    from nbgrader.server_extensions.validate_assignment import handlers

    monkeypatch.setattr(handlers, "Validator", handlers.Validator)

    class App:
        class log:  # noqa: N801 - stands in for the server's logger
            @staticmethod
            def info(*args):
                pass

    jupyter_validate._load_jupyter_server_extension(App())
    assert handlers.Validator is ShortValidator
    assert jupyter_validate._jupyter_server_extension_points() == [
        {"module": "attention_course.integrations.jupyter_validate"}
    ]
