"""The outcome of checking one answer: status, score, feedback, misconceptions."""

from __future__ import annotations

from dataclasses import dataclass, field

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
