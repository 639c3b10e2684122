"""Sample submissions for the demo class and the end-to-end tests.

Each sample student is made from the released notebook by replacing the source of some solution
cells: `instructor` takes every solution from source/, `partial` gets a few classic mistakes
(the course's samples/partial/<assignment>/<function>.py), `stub` hands in the release
untouched, and `hostile` tries to forge its score (samples/hostile/). The cells are the course's
data; this module only assembles them. `broken` is not a
notebook at all (invalid JSON). The same students answer the graded quiz (`attention_quiz`): all
right, right and wrong alternately, nothing, code and badly formatted answers, broken JSON.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from pathlib import Path

import nbformat

from attention_course.course import Course

SAMPLES = "samples"  # the course's folder of sample students' cells (data, not engine code)


def _cells(folder: Path) -> dict[str, str]:
    """function -> the cell a sample student writes for it (samples/<kind>/<function>.py)."""
    if not folder.is_dir():
        return {}
    return {
        p.stem: p.read_text() for p in sorted(folder.glob("*.py")) if not p.stem.startswith("_")
    }


def partial_cells(root: Path, assignment: str) -> dict[str, str]:
    """The partly correct student's mistaken cells of `assignment` (samples/partial/)."""
    return _cells(root / SAMPLES / "partial" / assignment)


def partial_unaffected(root: Path, assignment: str) -> tuple[str, ...]:
    """The functions the partly correct student still gets full marks for (samples.toml)."""
    path = root / SAMPLES / "samples.toml"
    data = tomllib.loads(path.read_text()) if path.is_file() else {}
    return tuple(data.get("partial", {}).get(assignment, {}).get("unaffected", ()))


def hostile_cells(root: Path) -> dict[str, str]:
    """The hostile student's cells (samples/hostile/): forged scores, endless loops, attempts
    to read the reference and rewrite the gradebook."""
    return _cells(root / SAMPLES / "hostile")


def _hostile_extra(root: Path, name: str) -> str:
    path = root / SAMPLES / "hostile" / f"_{name}.py"
    return path.read_text() if path.is_file() else ""


def hostile_demo_cell(root: Path) -> str:
    """The hostile student's plain demo cell (samples/hostile/_demo_cell.py): it writes a
    malformed reply where the grading process reads (empty when the course has none)."""
    return _hostile_extra(root, "demo_cell")


SAMPLE_STUDENTS = ("demo-instructor", "demo-partial", "demo-stub", "demo-hostile", "demo-broken")


def _solution_sources(assignment: str, root: Path) -> dict[str, str]:
    nb = nbformat.read(root / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }


def fill(
    released: Path,
    replacements: dict[str, str],
    extra_cells: Sequence[str] = (),
    demo_cells: Sequence[str] = (),
):
    """The released notebook with some solution cells' source replaced, `demo_cells` (plain,
    ungraded code cells) before its first solution cell and `extra_cells` at its end."""
    nb = nbformat.read(released, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in replacements:
            cell.source = replacements[grade_id]
    first = next(
        (i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution")),
        len(nb.cells),
    )
    nb.cells[first:first] = [nbformat.v4.new_code_cell(source) for source in demo_cells]
    for source in extra_cells:
        nb.cells.append(nbformat.v4.new_code_cell(source))
    return nb


def sample_notebooks(assignment: str, root: Path) -> dict[str, object]:
    """student id -> notebook (or a str holding invalid JSON) for one assignment."""
    if assignment == Course.load(root).quiz_assignment:
        return sample_quiz_notebooks(root)
    released = root / "release" / assignment / f"{assignment}.ipynb"
    solutions = _solution_sources(assignment, root)
    steal = _hostile_extra(root, "steal").replace(
        "{reference!r}", repr(str(Course.load(root).reference_file))
    )
    hostile = {
        k: v.replace("{steal}", steal).replace("{gradebook!r}", repr(str(root / "gradebook.db")))
        for k, v in hostile_cells(root).items()
    }
    last = _hostile_extra(root, "last_cell")  # kills the kernel during nbgrader's Execute
    demo = hostile_demo_cell(root)  # a malformed reply from a cell that is not graded
    partial = dict(solutions, **partial_cells(root, assignment))
    return {
        "demo-instructor": fill(released, solutions),
        "demo-partial": fill(released, partial),
        "demo-stub": fill(released, {}),
        "demo-hostile": fill(
            released, dict(solutions, **hostile), [last] if last else [], [demo] if demo else []
        ),
        "demo-broken": '{"cells": [ this is not JSON',
    }


def write_submissions(assignment: str, root: Path) -> list[str]:
    """Write submitted/<student>/<assignment>/<assignment>.ipynb for each sample student."""
    students = []
    for student, nb in sample_notebooks(assignment, root).items():
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{assignment}.ipynb"
        if isinstance(nb, str):
            path.write_text(nb)
        else:
            nbformat.write(nb, path)
        (folder / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC\n")
        students.append(student)
    return students


# --------------------------------------------------------------------------- quiz notebooks

_ANSWER_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
_TEXT_STUB = "YOUR ANSWER HERE"


def _quiz_answers(root: Path, student: str, pick) -> dict[tuple[str, str], object]:
    """(quiz, question) -> answer for every question of the graded quizzes, each picked by
    `pick(index, instance)` from the student's own variant."""
    from attention_course.quiz.loading import load_bank
    from attention_course.quiz.variants import for_student

    quiz_settings = Course.load(root).quiz
    assert quiz_settings is not None
    answers = {}
    for quiz in quiz_settings.quizzes:
        bank = load_bank(quiz, quiz_settings.banks, quiz_settings.formulas)
        for i, q in enumerate(bank.questions):
            answers[(quiz, q.id)] = pick(i, for_student(bank, q, student))
    return answers


def fill_quiz(released: Path, answers: dict[tuple[str, str], object]):
    """The released quiz notebook with answers written in: `answer = <literal>` in answer
    cells (a str starting with "code:" is written as it is), free text as the cell's text."""
    nb = nbformat.read(released, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        key = tuple(grade_id.removesuffix("__answer").split("__"))
        if key not in answers or not cell.metadata["nbgrader"].get("solution"):
            continue
        value = answers[key]
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace(_TEXT_STUB, str(value))
        else:
            code = value[5:] if isinstance(value, str) and value.startswith("code:") else None
            line = code if code is not None else f"answer = {value!r}"
            cell.source = cell.source.replace(_ANSWER_STUB, line)
    return nb


def sample_quiz_notebooks(root: Path) -> dict[str, object]:
    """student id -> filled-in graded quiz (or a str holding invalid JSON): all right, right and
    wrong alternately, untouched, code and badly formatted answers, broken."""
    from attention_course.quiz.samples import correct_answer, invalid_answer, wrong_answer

    course = Course.load(root)
    assert course.quiz is not None
    released = course.release_notebook(course.quiz.assignment)

    def hostile(i, inst):  # code is never run: it is not a literal, so the answer is invalid
        if i == 0:
            return "code:answer = chr(98)  # an expression, not a literal"
        return invalid_answer(inst)

    return {
        "demo-instructor": fill_quiz(
            released, _quiz_answers(root, "demo-instructor", lambda i, inst: correct_answer(inst))
        ),
        "demo-partial": fill_quiz(
            released,
            _quiz_answers(
                root,
                "demo-partial",
                lambda i, inst: correct_answer(inst) if i % 2 == 0 else wrong_answer(inst),
            ),
        ),
        "demo-stub": fill_quiz(released, {}),
        "demo-hostile": fill_quiz(released, _quiz_answers(root, "demo-hostile", hostile)),
        "demo-broken": '{"cells": [ this is not JSON',
    }


# --------------------------------------------------------------------------- quiz responses


def quiz_responses(root: Path, quiz: str = "knowledge_check") -> dict[str, object]:
    """student id -> a response file's content (or a str that is not valid JSON), built from
    each student's own variant: all right, right and wrong alternately, unanswered, wrongly
    formatted, broken."""
    from attention_course.quiz.loading import load_bank
    from attention_course.quiz.samples import correct_answer, invalid_answer, wrong_answer
    from attention_course.quiz.variants import for_student

    quiz_settings = Course.load(root).quiz
    assert quiz_settings is not None
    bank = load_bank(quiz, quiz_settings.banks, quiz_settings.formulas)

    def answers(student: str, pick) -> dict:
        return {q.id: pick(i, for_student(bank, q, student)) for i, q in enumerate(bank.questions)}

    return {
        "demo-instructor": answers("demo-instructor", lambda i, inst: correct_answer(inst)),
        "demo-partial": answers(
            "demo-partial",
            lambda i, inst: correct_answer(inst) if i % 2 == 0 else wrong_answer(inst),
        ),
        "demo-stub": {},
        "demo-hostile": answers("demo-hostile", lambda i, inst: invalid_answer(inst)),
        "demo-broken": '{"student": "demo-broken", "answers": {',
    }


def write_quiz_responses(root: Path, folder: Path, quiz: str = "knowledge_check") -> list[Path]:
    """One response file per sample student of the course at `root`, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for student, answers in quiz_responses(root, quiz).items():
        path = folder / f"{student}.json"
        if isinstance(answers, str):
            path.write_text(answers)
        else:
            path.write_text(json.dumps({"student": student, "quiz": quiz, "answers": answers}))
        paths.append(path)
    return paths
