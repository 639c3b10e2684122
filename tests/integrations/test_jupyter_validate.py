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


# --- what a run cannot tell: the quiz's answers, and an endless loop ---------------------------

QUIZ_RELEASE = COURSE_ROOT / "release" / "attention_quiz" / "attention_quiz.ipynb"
# answers a student wrote that the quiz's grader scores 0 for their form (issue 41's examples)
INVALID = {
    "knowledge_check__qkv_roles__answer": "answer = a",  # a name, not a literal
    "practice__head_width__answer": "answer = 256 / 4",  # an expression
    "practice__cross_attention_sources__answer": 'answer = "c) Queries come from the decoder"',
    "knowledge_check__why_heads__answer": 'answer = ["a"]',  # a list for a single choice
}


def _well_formed(form: dict) -> str:
    """An answer of the form's type that its grader reads (right or wrong)."""
    kind, choices = form["type"], form["choices"]
    value = {
        "single_choice": repr(choices[0]) if choices else None,
        "multiple_select": repr(choices[:1]),
        "numeric": "64",
        "shape": "(2, 11, 11)",
        "matching": repr({item: choices[0] for item in form["items"]}),
    }[kind]
    return f"answer = {value}"


def _quiz_answered(invalid: dict[str, str]) -> nbformat.NotebookNode:
    nb = nbformat.read(QUIZ_RELEASE, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        form = cell.metadata.get("attention_course", {}).get("answer_form")
        if form:
            cell.source = invalid.get(grade_id) or _well_formed(form)
    return nb


def test_every_answer_cell_of_the_released_quiz_carries_its_form_and_no_key():
    nb = nbformat.read(QUIZ_RELEASE, as_version=4)
    answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    forms = [c.metadata.get("attention_course", {}).get("answer_form") for c in answers]
    code = [f for c, f in zip(answers, forms, strict=True) if c.cell_type == "code"]
    assert code and all(code), "every code answer cell says its form"
    assert {tuple(sorted(f)) for f in code} == {("choices", "items", "type")}  # no key


def test_the_quiz_answers_that_cannot_be_graded_are_named_each():
    problems = jupyter_validate.quiz_answer_problems(_quiz_answered(INVALID))
    named = {where.split(":\n")[0].split(", ")[-1]: said for where, said in problems}
    assert sorted(named) == sorted(INVALID), problems
    assert all(said.startswith("Invalid answer: ") for said in named.values()), named
    assert "expected" in named["knowledge_check__why_heads__answer"]
    for where, _ in problems:
        assert where.startswith("Question "), where  # the heading the student reads
    assert jupyter_validate.quiz_answer_problems(_quiz_answered({})) == []


def test_an_untouched_quiz_names_every_question_as_unanswered():
    nb = nbformat.read(QUIZ_RELEASE, as_version=4)
    code_answers = [c for c in nb.cells if c.metadata.get("attention_course")]
    problems = jupyter_validate.quiz_answer_problems(nb)
    assert len(problems) == len(code_answers)
    assert all(said.startswith("No answer given.") for _, said in problems)


def test_validate_of_a_quiz_with_invalid_answers_never_says_success(tmp_path):
    """Validate runs the notebook (its answer cells pass, whatever they hold) and then reads
    the answers as the grader will: each invalid one is a failure of its own."""
    path = tmp_path / "attention_quiz.ipynb"
    nbformat.write(_quiz_answered(INVALID), path)
    failed = ShortValidator().validate(str(path)).get("failed", [])
    named = {e["source"].split(":\n")[0].split(", ")[-1]: e["raw_error"] for e in failed}
    quiz = {name: said for name, said in named.items() if name.endswith("__answer")}
    assert sorted(quiz) == sorted(INVALID), failed
    assert all(said.startswith("Invalid answer: ") for said in quiz.values())
    # the rest is nbgrader's own: the written answers (marked by hand) left unwritten
    assert all(name.startswith("concept_check__") for name in set(named) - set(quiz)), named


LOOP = """def f(x):
    while True:
        x += 1
"""


def _test_cell(source: str, grade_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {
        "grade": True,
        "grade_id": grade_id,
        "points": 1,
        "solution": False,
        "locked": True,
        "schema_version": 3,
    }
    return cell


def test_an_endless_loop_is_said_as_a_timeout_and_validate_stops_there(tmp_path):
    from traitlets.config import Config

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(LOOP),
        _test_cell("y = f(1)\nassert y == 2", "f_tests"),
        _test_cell("assert f(2) == 3", "f_more_tests"),
    ]
    path = tmp_path / "loop.ipynb"
    nbformat.write(nb, path)
    config = Config()
    config.Execute.timeout = 2
    config.Validator.ignore_checksums = True
    failed = ShortValidator(config=config).validate(str(path))["failed"]
    assert [e["source"].split(":")[0].split(",")[0] for e in failed] == ["f_tests", "f_more_tests"]
    first, second = failed
    assert first["raw_error"].startswith("Timed out: this cell ran longer than 2 s"), first
    assert "KeyboardInterrupt" not in first["raw_error"] + first["source"]
    assert "stopped in f, line 3:" in first["source"] or "stopped in f, line 2:" in first["source"]
    assert second["raw_error"].startswith("Not run: Validate stopped after f_tests timed out")
