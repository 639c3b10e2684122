"""A student's response file: JSON or YAML with the student id and their answers.

student: alice            # optional: else the file name (without suffix) is the id
quiz: knowledge_check     # optional: when given it must match the quiz being graded
answers:
  qkv_roles: b
  sdpa_steps: [a, b, d]
  why_heads: a

``quiz take`` writes such files (quiz/attempts.py) with more fields: time, checked_with,
verdicts, score and max_score. They are read and ignored: grading checks the answers again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_course.quiz.loading import parse_data_file
from attention_course.quiz.model import Bank

# What `quiz take` records besides the answers (see quiz/attempts.py); grading ignores them.
RECORDED_FIELDS = ("time", "checked_with", "verdicts", "score", "max_score")


@dataclass(frozen=True)
class Responses:
    student: str
    answers: dict[str, Any]
    path: Path | None = None


def read_responses(path: Path, bank: Bank) -> Responses:
    """Read one response file for ``bank``; raise ValueError with a one-line message."""
    data = parse_data_file(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping with 'answers', not {type(data).__name__}")
    unknown_keys = set(data) - {"student", "quiz", "answers", *RECORDED_FIELDS}
    if unknown_keys:
        raise ValueError(f"{path}: unknown field {sorted(unknown_keys)[0]!r}")
    quiz = data.get("quiz")
    if quiz is not None and quiz != bank.quiz:
        raise ValueError(f"{path}: answers are for quiz {quiz!r}, not {bank.quiz!r}")
    student = data.get("student", path.stem)
    if not isinstance(student, str | int) or not str(student).strip():
        raise ValueError(f"{path}: 'student' must be a non-empty id")
    answers = data.get("answers")
    if not isinstance(answers, dict):
        raise ValueError(f"{path}: 'answers' must be a mapping of question id to answer")
    unknown = [str(k) for k in answers if bank.question(str(k)) is None]
    if unknown:
        raise ValueError(f"{path}: no question {unknown[0]!r} in quiz {bank.quiz!r}")
    return Responses(str(student).strip(), {str(k): v for k, v in answers.items()}, path)
