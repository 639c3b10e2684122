"""Grading the quiz assignment in nbgrader, outside the student's kernel.

Add :class:`GradeQuizAnswers` to ``c.Autograde.autograde_preprocessors`` after the executing
preprocessor and before ``SaveAutoGrades``. For every grade cell whose (hidden) source has a
line ``# quiz-grader: <quiz>/<question>``, it reads the matching answer cell's SOURCE (never
running it: only a literal ``answer = ...`` parsed with ast.literal_eval counts), grades it with
the bank's key for the nbgrader student id (so templated questions use that student's numbers),
and REPLACES the grade cell's outputs with feedback lines on stdout and an ``execute_result``
holding the score as a plain float, which ``SaveAutoGrades`` reads (its metadata keeps the
graded result, for the class report's item analysis). For every cell with
``# quiz-review: <quiz>/<question>`` it writes the provisional score of the free-text answer
before it and why (quiz/free_text.py), for the instructor; the answer itself is graded by hand in
the formgrader. :class:`HideReviewNotes`, in ``c.GenerateFeedback.preprocessors``, keeps those
notes out of the students' feedback: a student sees only the mark given by hand.

Where this stands on a submission's way (docs/life-of-a-submission.md): in the same Autograde as
GradeOutOfKernel (preprocessors.py), after it, for the quiz assignment's cells; its scores reach
the gradebook through SaveAutoGrades as the graders' do.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from attention_course import settings
from attention_course.course import Course
from attention_course.grading.graders import GradingError
from attention_course.grading.notebook import parse_source
from attention_course.grading.preprocessors import graded_root
from attention_course.quiz.checking import Result, grade
from attention_course.quiz.loading import BankInvalid, load_bank
from attention_course.quiz.model import Bank
from attention_course.quiz.notebooks import REVIEW_MARKER, answer_cell_id, grade_cell_id
from attention_course.quiz.variants import for_student, placeholders

MARKER = re.compile(
    rf"^\s*(?P<kind>{re.escape(settings.GRADER_MARKER)}|{re.escape(REVIEW_MARKER)})"
    r"\s*(?P<quiz>\w+)/(?P<question>\w+)\s*$",
    re.MULTILINE,
)
UNANSWERED_TEXT = {"", "Write your answer here.", "YOUR ANSWER HERE"}
# Key of the score output's metadata that keeps the graded result (status, fraction, points,
# feedback, misconceptions, answer), for the class report's item analysis.
RECORD_KEY = "attention_course"


class NotALiteral(ValueError):
    """The answer cell does not hold a literal ``answer = ...``."""


def read_answer(source: str) -> Any:
    """The value of the last top-level ``answer = <literal>`` in ``source``, without running it.

    Returns None when there is no such assignment; raises NotALiteral when the cell is longer
    than an answer may be, is not valid Python (or too deeply nested to be parsed), or the
    assigned value is not a literal.
    """
    if len(source) > settings.ANSWER_CELL_CHARS:
        raise NotALiteral(
            f"the answer cell holds {len(source)} characters, more than the "
            f"{settings.ANSWER_CELL_CHARS} an answer may have"
        )
    try:
        tree = parse_source(source)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else exc.msg
        raise NotALiteral(f"the answer cell is not valid Python ({where})") from None
    value = None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "answer"
        ):
            value = node.value
    if value is None:
        return None
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise NotALiteral(
            "`answer = ...` must be a literal (a string, number, tuple, list or dict), "
            "not an expression, a variable or a call"
        ) from None


def _score_text(score: float) -> str:
    return repr(float(round(score, 6)))


class GradeQuizAnswers(NbGraderPreprocessor):
    """Grade quiz answer cells against the bank key, outside the kernel (see module doc)."""

    course_root = Unicode(
        "", help="the course folder whose quiz banks hold the key (nbgrader_config.py sets it)"
    ).tag(config=True)
    bank_dir = Unicode("", help="folder of the quiz banks (default: the course's)").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        student = resources["nbgrader"]["student"]
        cells = {
            cell.metadata["nbgrader"]["grade_id"]: cell
            for cell in nb.cells
            if "nbgrader" in cell.metadata and "grade_id" in cell.metadata["nbgrader"]
        }
        banks: dict[str, Bank | str] = {}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            found = MARKER.search(cell.source)
            if not found:
                continue
            quiz, qid = found["quiz"], found["question"]
            if quiz not in banks:
                try:
                    banks[quiz] = load_bank(quiz, *self._bank_path(resources))
                except (LookupError, BankInvalid) as exc:
                    banks[quiz] = str(exc)
            bank = banks[quiz]
            if found["kind"] == settings.GRADER_MARKER:
                lines, result = self._grade(bank, qid, cells, student)
                score = result.score if result else 0.0
                record = {RECORD_KEY: {"result": asdict(result)}} if result else {}
                cell.outputs = [
                    new_output("stream", name="stdout", text="\n".join(lines) + "\n"),
                    new_output(
                        "execute_result",
                        data={"text/plain": _score_text(score)},
                        metadata=record,
                        execution_count=cell.get("execution_count"),
                    ),
                ]
            else:
                lines = self._review(bank, qid, cells, student)
                cell.outputs = [new_output("stream", name="stdout", text="\n".join(lines) + "\n")]
        return nb, resources

    def _bank_path(self, resources: dict) -> tuple[Path, Path | None]:
        """The banks' folder and the formulas file: `bank_dir` when set, else the course's
        (`course_root`, else the course of the folder nbgrader grades in)."""
        if self.bank_dir:
            return Path(self.bank_dir), None
        root = graded_root(resources, self.course_root)
        if not root:
            raise GradingError("the quiz's course is not known (set GradeQuizAnswers.course_root)")
        quiz = Course.load(root).quiz
        if quiz is None:
            raise GradingError(f"{root}: the course declares no quiz ([quiz] in course.toml)")
        return quiz.banks, quiz.formulas

    def _grade(
        self, bank: Bank | str, qid: str, cells: dict, student: str
    ) -> tuple[list[str], Result | None]:
        """Feedback lines and the result (None when the answer cell is gone: 0 points). A bank
        that cannot be read, or a question it lacks, is a fault of grading, not the student's:
        GradingError, and the submission is not graded."""
        if isinstance(bank, str):
            raise GradingError(f"the quiz cannot be graded: {bank}")
        question = bank.question(qid)
        if question is None:
            raise GradingError(f"the quiz cannot be graded: {bank.quiz} has no question {qid!r}")
        answer_cell = cells.get(answer_cell_id(bank.quiz, qid))
        if answer_cell is None:
            self.log.error("quiz grader: no answer cell for %s/%s", bank.quiz, qid)
            return [f"Cannot grade {bank.quiz}/{qid}: its answer cell is missing."], None
        instance = for_student(bank, question, student)
        try:
            value = read_answer(answer_cell.source)
        except NotALiteral as exc:
            result = Result(qid, "invalid", 0.0, question.points, [f"Invalid answer: {exc}."])
        else:
            result = grade(instance, value)
        lines = [
            f"{bank.quiz}/{qid}: {result.status}, {result.score:g} of {result.points:g} points"
        ]
        if instance.params and question.templated:
            shown = placeholders(question.prompt)
            used = ", ".join(f"{k} = {v}" for k, v in instance.params.items() if k in shown)
            lines.append(f"Graded with the numbers of student {student!r}: {used}")
        lines += result.feedback
        return lines, result

    def _review(self, bank: Bank | str, qid: str, cells: dict, student: str) -> list[str]:
        if isinstance(bank, str):
            return [f"No provisional score: {bank}"]
        question = bank.question(qid)
        answer_cell = cells.get(grade_cell_id(bank.quiz, qid))
        if question is None or answer_cell is None:
            return [f"No provisional score: no free-text answer cell for {bank.quiz}/{qid}"]
        text = answer_cell.source.strip()
        if text in UNANSWERED_TEXT:
            return ["For the instructor only: no answer written (provisional score 0)."]
        result = grade(for_student(bank, question, student), text)
        return ["For the instructor only (hidden from the student's feedback):", *result.review]


REVIEW_HIDDEN = "Your answer above is marked by hand by your instructor.\n"


class HideReviewNotes(NbGraderPreprocessor):
    """Feedback: replace the outputs of the instructor-only review cells (``# quiz-review:``)
    with one line, so the student sees the final, hand-given mark and nothing provisional."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        for cell in nb.cells:
            found = MARKER.search(cell.source) if cell.cell_type == "code" else None
            if found and found["kind"] == REVIEW_MARKER:
                cell.outputs = [new_output("stream", name="stdout", text=REVIEW_HIDDEN)]
        return nb, resources
