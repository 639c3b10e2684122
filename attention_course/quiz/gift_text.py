"""Moodle GIFT text: escaping, plain numbers, answer weights and feedback."""

from __future__ import annotations

from decimal import Decimal

SPECIAL = "\\~=#{}:"


def escape(text: str) -> str:
    """Escape GIFT's special characters; newlines become GIFT's \\n."""
    out = "".join("\\" + ch if ch in SPECIAL else ch for ch in text)
    return out.replace("\r", "").replace("\n", "\\n")


def gift_number(value: float) -> str:
    """A number without exponent (GIFT readers expect plain decimals)."""
    text = format(Decimal(repr(float(value))).normalize(), "f")
    return text[:-2] if text.endswith(".0") else text


def weight(fraction: float) -> str:
    text = f"{100 * fraction:.5f}".rstrip("0").rstrip(".")
    return f"%{text}%"


def feedback(text: str) -> str:
    return f"#{escape(text)}" if text else ""
