"""The graded quiz as an nbgrader assignment, and the self-check widgets notebook."""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import pytest

from attention_course import settings
from attention_course.grading.quiz_answers import NotALiteral, read_answer
from attention_course.quiz.loading import load_bank
from attention_course.quiz.notebooks import embeddable_source, graded_notebook, selfcheck_notebook
from attention_course.quiz.samples import correct_answer, wrong_answer
from attention_course.quiz.selfcheck import build_selfcheck
from attention_course.quiz.variants import for_student
from tests import course
from tests.course import BANK_DIR, by_function

BANKS = [load_bank(q, BANK_DIR) for q in course.GRADED_QUIZZES]


def test_committed_source_notebook_is_generated_from_the_banks() -> None:
    committed = course.GRADED_NOTEBOOK.read_text(encoding="utf-8")
    assert committed == nbformat.writes(graded_notebook(BANKS)), (
        "regenerate it: attention-course quiz notebook"
    )


def test_source_notebook_holds_no_key() -> None:
    nb = graded_notebook(BANKS)
    text = nbformat.writes(nb)
    for bank in BANKS:
        for q in bank.questions:
            assert not q.explanation or q.explanation not in text
            if q.sample_answer:
                assert q.sample_answer not in text
    answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert len(answers) == sum(len(b.questions) for b in BANKS)
    for cell in answers:
        if cell.cell_type == "code":
            assert read_answer(cell.source) is None  # only `answer = None`


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('answer = "b"', "b"),
        ("answer = ['a', 'c']", ["a", "c"]),
        ("answer = (6, 8)", (6, 8)),
        ("answer = -1.5e3", -1500.0),
        ('answer = {"query": "D"}', {"query": "D"}),
        ("answer = None\n# YOUR CODE HERE\nanswer = 64", 64),
        ("import os\nanswer = 3\nprint(answer)", 3),
        ("# nothing yet", None),
        ("answer = None\nraise NotImplementedError()", None),
    ],
)
def test_read_answer_literals(source: str, expected: object) -> None:
    assert read_answer(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "answer = 2 ** 10",
        "answer = x",
        "answer = __import__('os').system('true')",
        "answer = [i for i in range(3)]",
        'answer = f"{1}"',
        "answer = (6, 8",
    ],
)
def test_read_answer_never_runs_code(source: str) -> None:
    with pytest.raises(NotALiteral):
        read_answer(source)


# Answers the parser cannot take: too long to read, too deep for Python's parser (RecursionError,
# MemoryError), and one that makes it warn.
TERMS = "answer = " + "1+" * 200_000 + "1"
UNPARSABLE = {
    "200000 terms": (TERMS, "characters, more than the"),
    "3000 terms": ("answer = " + "1+" * 3000 + "1", "nested too deeply"),
    "5000 signs": ("answer = " + "-" * 5000 + "1", "nested too deeply"),
    "a chain of attributes": ("answer = " + "a." * 4000 + "a", "nested too deeply"),
    "a warning": ("answer = 1if 1 else 2\nanswer = 0x", "not valid Python"),
}


@pytest.mark.parametrize("name", UNPARSABLE)
def test_an_answer_the_parser_cannot_take_is_invalid(name: str) -> None:
    source, words = UNPARSABLE[name]
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with pytest.raises(NotALiteral, match=words):
            read_answer(source)
    assert shown == []  # the parser's warnings about the answer are not the grader's output


def test_check_grades_an_unparsable_quiz_answer_as_invalid(tmp_path: Path) -> None:
    """`attention-course check` on a quiz notebook with answers Python's parser cannot take: a
    student's outcome (exit 0), those questions 0 points with the reason, the others graded."""
    from attention_course.cli.samples import fill_quiz

    student = "demo-instructor"
    right = {
        (b.quiz, q.id): correct_answer(for_student(b, q, student))
        for b in BANKS
        for q in b.questions
    }
    nb = fill_quiz(course.COURSE.release_notebook(course.QUIZ_ASSIGNMENT), right)
    answers = [
        c
        for c in nb.cells
        if c.cell_type == "code"
        and c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("__answer")
    ]
    broken = {}  # question -> the reason its answer is invalid
    for cell, name in zip(answers, ("200000 terms", "3000 terms"), strict=False):
        cell.source, words = UNPARSABLE[name]
        broken[cell.metadata["nbgrader"]["grade_id"].split("__")[1]] = words
    path = tmp_path / "attention_quiz.ipynb"
    nbformat.write(nb, path)
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "check", str(path), "--json"]
        + ["--student", student],
        capture_output=True,
        text=True,
        cwd=course.COURSE_ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    tests = by_function(json.loads(proc.stdout))
    assert len(broken) == 2 and len(tests) > 2
    for name, test in tests.items():
        if name in broken:
            assert test["score"] == 0 and "invalid" in test["output"], name
            assert broken[name] in test["output"], name
        else:
            assert test["score"] == test["max_score"], name


# --- self-check widgets notebook ----------------------------------------------------------------


def test_widgets_notebook_checks_answers() -> None:
    bank = load_bank("misconceptions", BANK_DIR)
    nb = selfcheck_notebook(build_selfcheck(bank))
    code, shown = [c for c in nb.cells if c.cell_type == "code"]
    assert code.metadata["jupyter"]["source_hidden"] is True  # the checking code out of sight
    assert shown.source == "self_check()"  # the one line a student sees
    namespace: dict = {}
    exec(compile(code.source, "<cell>", "exec"), namespace)  # noqa: S102 - our own cell
    for q in bank.questions:
        inst = for_student(bank, q, "alice")
        assert namespace["check_answer"](q.id, "alice", correct_answer(inst))["status"] == "correct"
        assert namespace["check_answer"](q.id, "alice", wrong_answer(inst))["status"] == "wrong"
    assert len(namespace["_questions"]("alice")) == len(bank.questions)
    namespace["self_check"]()  # builds the id box without error (the browser test presses it)


# --- nbgrader end to end ------------------------------------------------------------------------


def _fill(nb: nbformat.NotebookNode, answers: dict[str, object], free_text: str | None) -> None:
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("__answer"):
            quiz, qid, _ = grade_id.split("__")
            if (quiz, qid) in answers:
                value = answers[(quiz, qid)]
                text = value if isinstance(value, str) and value.startswith("RAW:") else None
                line = text[4:] if text else f"answer = {value!r}"
                cell.source = cell.source.replace(
                    "# YOUR CODE HERE\nraise NotImplementedError()", line
                )
        if grade_id == "concept_check__long_range" and free_text is not None:
            cell.source = free_text


@pytest.fixture(scope="module")
def autograded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from nbgrader.preprocessors import (
        CheckCellMetadata,
        Execute,
        IgnorePattern,
        LimitOutput,
        SaveAutoGrades,
    )
    from traitlets.config import Config

    from attention_course.grading.quiz_answers import GradeQuizAnswers

    root = tmp_path_factory.mktemp("course")
    assignment = course.QUIZ_ASSIGNMENT
    (root / "source" / assignment).mkdir(parents=True)
    shutil.copy(course.GRADED_NOTEBOOK, root / "source" / assignment)
    config = Config()
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.course_id = "quiz-test"
    config.GradeQuizAnswers.bank_dir = str(BANK_DIR)  # a bare nbgrader course: no course.toml
    config.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    config.Autograde.autograde_preprocessors = [
        Execute,
        GradeQuizAnswers,
        IgnorePattern,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveAutoGrades,
        CheckCellMetadata,
    ]
    import nbgrader.api

    old_path = os.environ["PATH"]
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{old_path}"  # alembic
    # nbgrader runs the alembic command for its schema version on every gradebook open (about
    # 2 s each here); read it once, in this process
    from alembic.config import Config as AlembicConfig
    from alembic.script import ScriptDirectory

    with nbgrader.api._temp_alembic_ini("sqlite:///unused.db") as ini:
        version = ScriptDirectory.from_config(AlembicConfig(ini)).get_current_head()
    real_version = nbgrader.api.get_alembic_version
    nbgrader.api.get_alembic_version = lambda: version
    try:
        api = NbGraderAPI(config=config)
        result = api.generate_assignment(assignment, force=True)
        assert result["success"], result["log"]
        released = root / "release" / assignment / f"{assignment}.ipynb"
        alice_answers = {}
        for bank in BANKS:
            for q in bank.questions:
                if q.type != "free_text":
                    alice_answers[(bank.quiz, q.id)] = correct_answer(for_student(bank, q, "alice"))
        students = {
            "alice": (
                alice_answers,
                "Attention looks at every position directly and takes a sum of their values "
                "weighted by relevance.",
            ),
            "bob": (
                {
                    **alice_answers,  # alice's numbers are not bob's
                    ("knowledge_check", "qkv_roles"): "RAW:answer = chr(98)",
                    ("concept_check", "library_analogy"): {"query": "D", "key": "C", "value": "A"},
                },
                None,
            ),
        }
        for student, (answers, text) in students.items():
            nb = nbformat.read(released, as_version=4)
            _fill(nb, answers, text)
            folder = root / "submitted" / student / assignment
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{assignment}.ipynb")
            result = api.autograde(assignment, student, force=True, create=True)
            assert result["success"], result["log"]
        grades, outputs = {}, {}
        with Gradebook(config.CourseDirectory.db_url) as gb:
            for student in students:
                sub = gb.find_submission_notebook(assignment, assignment, student)
                grades[student] = {
                    g.name: (g.auto_score, g.max_score, g.needs_manual_grade) for g in sub.grades
                }
                nb = nbformat.read(
                    root / "autograded" / student / assignment / f"{assignment}.ipynb", 4
                )
                outputs[student] = {
                    c.metadata["nbgrader"]["grade_id"]: c.get("outputs", [])
                    for c in nb.cells
                    if "nbgrader" in c.metadata
                }
        return {
            "released": released.read_text(encoding="utf-8"),
            "grades": grades,
            "outputs": outputs,
        }
    finally:
        os.environ["PATH"] = old_path
        nbgrader.api.get_alembic_version = real_version


@pytest.mark.slow
def test_released_notebook_has_no_key_or_hidden_grader(autograded: dict) -> None:
    text = autograded["released"]
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    assert settings.GRADER_MARKER not in text
    for bank in BANKS:
        for q in bank.questions:
            assert not q.explanation or q.explanation not in text
            for c in q.choices:
                if c.feedback:
                    assert c.feedback not in text
    released = nbformat.reads(text, as_version=4)
    for cell in released.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id", "").endswith("__answer"):
            assert read_answer(cell.source) is None


@pytest.mark.slow
def test_correct_answers_get_full_marks_in_the_gradebook(autograded: dict) -> None:
    grades = autograded["grades"]["alice"]
    for bank in BANKS:
        for q in bank.questions:
            auto, maximum, manual = grades[f"{bank.quiz}__{q.id}"]
            if q.type == "free_text":
                assert auto is None and manual  # graded by hand in the formgrader
            else:
                assert (auto, maximum, manual) == (q.points, q.points, False), q.id


@pytest.mark.slow
def test_each_student_is_graded_with_their_own_numbers(autograded: dict) -> None:
    bob = autograded["grades"]["bob"]
    assert bob["knowledge_check__qkv_roles"][0] == 0.0  # an expression is not run
    assert bob["concept_check__library_analogy"][0] == pytest.approx(0.5)
    assert bob["concept_check__why_scale"][0] == 1.0
    templated_wrong = [
        name for name, (auto, maximum, _) in bob.items() if auto is not None and auto < maximum
    ]
    assert len(templated_wrong) >= 3  # alice's numbers are wrong for bob


@pytest.mark.slow
def test_grade_cell_outputs_are_feedback_and_a_plain_float(autograded: dict) -> None:
    outputs = autograded["outputs"]["bob"]
    for name, cell_outputs in outputs.items():
        if name.count("__") != 1 or name == "concept_check__long_range" or "title" in name:
            continue
        kinds = [o["output_type"] for o in cell_outputs]
        assert kinds == ["stream", "execute_result"], name
        assert cell_outputs[0]["name"] == "stdout"
        score = cell_outputs[1]["data"]["text/plain"]
        assert float(score) == autograded["grades"]["bob"][name][0], name  # what was stored
        assert "np." not in score
    invalid = outputs["knowledge_check__qkv_roles"][0]["text"]
    assert "invalid" in invalid and "must be a literal" in invalid
    review = autograded["outputs"]["alice"]["concept_check__long_range__review"][0]["text"]
    assert review.startswith("For the instructor only")
    assert "Provisional score 1.5 of 2" in review  # direct access + relevance, not distance
    assert "no answer written" in outputs["concept_check__long_range__review"][0]["text"]
    numbers = autograded["outputs"]["bob"]["misconceptions__mha_params"][0]["text"]
    assert "Graded with the numbers of student 'bob'" in numbers
    assert json.dumps(autograded["outputs"]["alice"]).count('"stderr"') == 0


def test_feedback_hides_the_instructors_notes() -> None:
    """The review cell's provisional score is for the instructor: feedback shows one line."""
    from nbformat.v4 import new_output

    from attention_course.grading.quiz_answers import REVIEW_HIDDEN, HideReviewNotes

    nb = graded_notebook(BANKS)
    review = next(
        c
        for c in nb.cells
        if c.source.rstrip().endswith("concept_check/long_range") and "quiz-review" in c.source
    )
    review.outputs = [new_output("stream", name="stdout", text="Provisional score 2 of 2")]
    nb, _ = HideReviewNotes().preprocess(nb, {})
    assert [o["text"] for o in review.outputs] == [REVIEW_HIDDEN]
    config = (course.COURSE_ROOT / "nbgrader_config.py").read_text()
    assert "HideReviewNotes," in config.split("c.GenerateFeedback.preprocessors")[1]


def test_headings_are_readable_and_the_hashing_code_is_hidden() -> None:
    nb = graded_notebook(BANKS)
    headings = [c.source.splitlines()[0] for c in nb.cells if c.source.startswith("### ")]
    assert headings[0] == "### Question 1.1: Queries, Keys & Values (1 point)"
    assert not [h for h in headings if "__" in h or "_" in h.split(":")[0]]
    numbers = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "quiz_numbers"
    )
    assert numbers.metadata["jupyter"]["source_hidden"] is True
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert len(first_code.source.splitlines()) < 5  # the notebook does not open with the hashing


@pytest.mark.parametrize("quiz", ["knowledge_check", "concept_check"])
def test_widget_choices_are_readable_whole(quiz: str) -> None:
    """Choice texts go in full into HTML (which wraps); the selecting widgets show only letters,
    whose labels cannot be cut off."""
    import ipywidgets as widgets

    from attention_course.quiz import answer_core, seeding
    from attention_course.quiz.notebooks import WIDGETS_UI

    namespace: dict = {"SELF_CHECK": build_selfcheck(load_bank(quiz, BANK_DIR), salt="s")}
    for module in (seeding, answer_core):
        exec(compile(embeddable_source(module), module.__name__, "exec"), namespace)
    exec(WIDGETS_UI, namespace)
    for q in namespace["SELF_CHECK"]["questions"]:
        if not q.get("choices"):
            continue
        box, _ = namespace["_input"](q)
        parts = list(box.children)
        while any(isinstance(p, widgets.Box) for p in parts):
            parts = [c for p in parts for c in (p.children if isinstance(p, widgets.Box) else [p])]
        html_text = " ".join(p.value for p in parts if isinstance(p, widgets.HTML))
        for choice in q["choices"]:
            assert html.escape(choice["text"]) in html_text, choice["text"]
        for p in parts:
            if isinstance(p, widgets.Checkbox | widgets.Dropdown):
                labels = [p.description] if isinstance(p, widgets.Checkbox) else p.options
                labels = [lab[0] if isinstance(lab, tuple) else lab for lab in labels]
                assert all(len(str(lab)) <= 3 for lab in labels if lab), labels
            if isinstance(p, widgets.ToggleButtons):
                assert all(len(str(opt)) <= 3 for opt in p.options)


def test_a_bank_that_cannot_be_read_is_a_grading_error_not_a_zero(tmp_path) -> None:
    """The instructor's bank missing or broken, or a question it lacks: the quiz is not graded
    (a fault of grading, as a grader that fails), never 0 points for the student."""
    from attention_course.grading.graders import GradingError
    from attention_course.grading.quiz_answers import GradeQuizAnswers

    resources = {"nbgrader": {"student": "alice", "assignment": course.QUIZ_ASSIGNMENT}}
    nb = graded_notebook(BANKS)
    with pytest.raises(GradingError, match="the quiz cannot be graded"):
        GradeQuizAnswers(bank_dir=str(tmp_path)).preprocess(nb, resources)  # no banks there
    shutil.copytree(course.BANK_DIR, tmp_path / "banks")
    bank = tmp_path / "banks" / "knowledge_check.yaml"
    bank.write_text(bank.read_text().replace("id: mask_inf", "id: mask_infinity"))
    with pytest.raises(GradingError, match="has no question 'mask_inf'"):
        GradeQuizAnswers(bank_dir=str(tmp_path / "banks")).preprocess(nb, resources)
