"""One student taking one quiz: the questions as they see them, and a checker for answers.

Two kinds, with the same interface: :class:`BankSession` grades with the instructor's bank (the
full key, including free-text rubrics); :class:`SelfcheckSession` checks against a self-check key
(salted hashes, see quiz/selfcheck.py), which is what students can be given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from attention_course.quiz import types
from attention_course.quiz.checking import Result, grade
from attention_course.quiz.model import Bank
from attention_course.quiz.selfcheck import check, prompt_for
from attention_course.quiz.variants import Instance, for_student


@dataclass(frozen=True)
class Shown:
    """A question as shown to a student."""

    id: str
    type: str
    points: float
    prompt: str
    choices: tuple[tuple[str, str], ...] = ()  # (id, text): choices or matching options
    items: tuple[str, ...] = ()
    format: str = ""


@dataclass
class BankSession:
    bank: Bank
    student: str
    instances: dict[str, Instance] = field(init=False)

    def __post_init__(self) -> None:
        self.instances = {
            q.id: for_student(self.bank, q, self.student) for q in self.bank.questions
        }

    checked_with = "bank"

    @property
    def title(self) -> str:
        return self.bank.title

    @property
    def quiz(self) -> str:
        return self.bank.quiz

    def questions(self) -> list[Shown]:
        return [
            Shown(
                q.id,
                q.type,
                q.points,
                self.instances[q.id].prompt,
                tuple((c.id, c.text) for c in q.choices),
                q.items,
                types.of(q).answer_format,
            )
            for q in self.bank.questions
        ]

    def check(self, question_id: str, raw: Any) -> Result:
        return grade(self.instances[question_id], raw)


@dataclass
class SelfcheckSession:
    data: dict[str, Any]
    student: str

    checked_with = "selfcheck"

    @property
    def title(self) -> str:
        return self.data.get("title", self.data["quiz"])

    @property
    def quiz(self) -> str:
        return str(self.data["quiz"])

    def questions(self) -> list[Shown]:
        return [
            Shown(
                q["id"],
                q["type"],
                q["points"],
                prompt_for(self.data, q, self.student),
                tuple((c["id"], c["text"]) for c in q.get("choices", [])),
                tuple(q.get("items", [])),
                q["format"],
            )
            for q in self.data["questions"]
        ]

    def check(self, question_id: str, raw: Any) -> Result:
        spec = next(q for q in self.data["questions"] if q["id"] == question_id)
        return check(self.data, spec, self.student, raw)
