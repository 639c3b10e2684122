"""Recording an attempt of ``quiz take``: a response file that ``quiz grade`` reads.

The file is the response format of quiz/responses.py (student, quiz, answers) plus when the
attempt was made and the verdicts ``take`` printed (status, score, points per question, and the
total). ``quiz grade`` grades the answers again with the bank and ignores the recorded verdicts:
they say what the student was told, not what the grade is.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attention_course import settings
from attention_course.quiz.results import Result


def attempt_record(
    quiz: str,
    student: str,
    answers: dict[str, Any],
    results: list[Result],
    checked_with: str,
    when: datetime | None = None,
) -> dict[str, Any]:
    """The response file's content: plain data, ready for JSON."""
    when = when or datetime.now(UTC)
    marked = [r for r in results if r.status != "needs_review"]
    return {
        "student": student,
        "quiz": quiz,
        "time": when.isoformat(timespec="seconds"),
        "checked_with": checked_with,
        "answers": {r.question: answers[r.question] for r in results if r.question in answers},
        "verdicts": {
            r.question: {
                "status": r.status,
                "score": round(r.score, settings.SCORE_DECIMALS),
                "points": r.points,
            }
            for r in results
        },
        "score": round(sum(r.score for r in marked), settings.SCORE_DECIMALS),
        "max_score": sum(r.points for r in marked),
    }


def default_path(quiz: str, student: str, when: datetime) -> Path:
    """settings.ATTEMPTS_DIR/<quiz>-<student>-<UTC time>.json (the id made safe for a name)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", student).strip("._") or "student"
    stamp = when.strftime("%Y%m%dT%H%M%SZ")
    return settings.ATTEMPTS_DIR / f"{quiz}-{safe}-{stamp}.json"


def write_attempt(record: dict[str, Any], path: Path) -> None:
    """Write the record; raise OSError as the file system does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
