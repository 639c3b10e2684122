"""The outcome of checking one answer: status, score, feedback, misconceptions."""

from __future__ import annotations

from dataclasses import dataclass, field

from attention_course import settings

STATUSES = ("correct", "partial", "wrong", "invalid", "unanswered", "needs_review")
RECORDED = "Answer recorded: free-text answers are marked by hand by your instructor."


@dataclass
class Result:
    """The outcome of one answer. ``fraction`` is provisional when status is needs_review.

    ``feedback`` is what the student may see; ``review`` holds notes for the instructor only
    (the provisional score of a free-text answer and why)."""

    question: str
    status: str
    fraction: float
    points: float
    feedback: list[str] = field(default_factory=list)
    misconceptions: list[str] = field(default_factory=list)
    answer: str = ""  # canonical text of a well-formed answer, for item analysis
    review: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return round(self.fraction * self.points, 6)


def format_points(value: float) -> str:
    """A score or a number of points as printed: rounded to settings.SCORE_DECIMALS decimals,
    without trailing zeros (2 -> "2", 1.5 -> "1.5", 4/3 -> "1.33")."""
    text = f"{round(value, settings.SCORE_DECIMALS):.{settings.SCORE_DECIMALS}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text == "-0" else text
