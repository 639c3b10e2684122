"""Per-student variants: which variant a student gets, and the numbers of each variant.

Standard library only, and self-contained: notebooks embed this file's code verbatim, so
students' copies draw exactly the numbers the grader uses.

A student's variant is ``sha256("<quiz>|<student>")`` modulo the number of variants; the value of
parameter ``name`` in variant ``v`` is drawn from ``sha256("<quiz>|<v>|<name>")``. Python's
``hash()`` is never used: it changes from one process to the next.
"""

from __future__ import annotations

import hashlib


def normalize_student_id(student_id: str) -> str:
    """The form of a student id that seeds draw from: surrounding spaces and case do not matter."""
    return str(student_id).strip().casefold()


def _digest_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def variant_of(quiz_id: str, student_id: str, variant_count: int) -> int:
    """The variant number, in ``range(variant_count)``, of this student in this quiz."""
    return _digest_int(f"{quiz_id}|{normalize_student_id(student_id)}") % variant_count


def draw_parameters(quiz_id: str, variant: int, choices: dict[str, list]) -> dict[str, object]:
    """The parameter values of one variant: one value per parameter, from its list of choices."""
    return {
        name: options[_digest_int(f"{quiz_id}|{variant}|{name}") % len(options)]
        for name, options in choices.items()
    }
