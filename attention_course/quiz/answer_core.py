"""Reading students' answers, and checking them against a self-check key of salted hashes.

Standard library only, and self-contained: the self-check notebook embeds this file's code
verbatim, so the terminal and the notebook check answers the same way.

Reading: every question type has one expected answer format; an answer in another format raises
:class:`InvalidAnswer` (whose message says what is expected), which graders report as "invalid",
not "wrong".

Self-check keys hold no answer in plain text. Each possible answer that earns a reaction (every
choice, every matching pair, the key and typical wrong answers of numeric and shape questions) is
stored as ``sha256(salt|question|variant|answer)``, next to its reaction (score, feedback)
encrypted with a key derived from that same answer, so a reaction can only be read by giving the
answer. This hides answers from reading, not from trying: anyone can hash every choice, and a
numeric key can be found by hashing candidate numbers. Numeric answers are hashed by tolerance
bucket, so the self-check accepts a window up to twice the tolerance.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

FORMATS = {
    "single_choice": 'one choice letter, for example "b"',
    "multiple_select": 'a list of choice letters, for example ["a", "c"] (or "a, c"); [] for none',
    "numeric": "a number, for example 42, 0.125 or 1.5e6",
    "shape": "a shape, for example (3, 4)",
    "matching": 'a mapping of every item to an option letter, for example {"query": "A", ...}',
    "free_text": "a few sentences of text",
}


class InvalidAnswer(ValueError):
    """The answer is not in the expected format (which the message says)."""


def _fail(qtype: str, detail: str) -> InvalidAnswer:
    return InvalidAnswer(f"{detail}; expected {FORMATS[qtype]}")


# --- reading answers ----------------------------------------------------------------------------


def _choice_id(raw: object, choice_ids: Sequence[str], qtype: str) -> str:
    if not isinstance(raw, str):
        raise _fail(qtype, f"{raw!r} is not a choice letter")
    text = raw.strip().rstrip(").").strip().casefold()
    for cid in choice_ids:
        if cid.casefold() == text:
            return cid
    raise _fail(qtype, f"{raw.strip()!r} is not one of {', '.join(choice_ids)}")


def parse_single(raw: object, choice_ids: Sequence[str]) -> str:
    return _choice_id(raw, choice_ids, "single_choice")


def parse_multiple(raw: object, choice_ids: Sequence[str]) -> frozenset[str]:
    if isinstance(raw, str):
        raw = [part for part in re.split(r"[\s,;]+", raw.strip().strip("[]")) if part]
    if not isinstance(raw, list | tuple | set | frozenset):
        raise _fail("multiple_select", f"{raw!r} is not a list")
    picked = [_choice_id(item, choice_ids, "multiple_select") for item in raw]
    if len(set(picked)) != len(picked):
        raise _fail("multiple_select", "a choice is listed twice")
    return frozenset(picked)


def parse_number(raw: object) -> float:
    if isinstance(raw, bool):
        raise _fail("numeric", f"{raw!r} is not a number")
    if isinstance(raw, str):
        text = raw.strip()
        if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text):
            raise _fail("numeric", f"{raw.strip()!r} is not a number")
        raw = float(text)
    if not isinstance(raw, int | float) or not math.isfinite(raw):
        raise _fail("numeric", f"{raw!r} is not a finite number")
    return float(raw)


def shape_forms(shape: Sequence[int]) -> list[str]:
    """Every way of writing ``shape`` that counts as that shape: the one accepted set.

    The course's checker and every export (GIFT, Moodle XML, QTI, jupyterquiz) accept exactly
    these spellings, compared without the spaces around the whole answer and ignoring case
    (so 9X16 is 9x16): in parentheses or brackets, bare, with or without a space after each
    comma, or joined by x or × (with or without spaces around it). A 1-dimensional shape in
    parentheses keeps Python's trailing comma: (9,).
    """
    dims = [str(int(v)) for v in shape]
    spaced, tight = ", ".join(dims), ",".join(dims)
    trail = "," if len(dims) == 1 else ""
    forms = [f"({spaced}{trail})", f"({tight}{trail})", f"[{spaced}]", f"[{tight}]", spaced, tight]
    forms += [sep.join(dims) for sep in ("x", " x ", "×", " × ")]
    return list(dict.fromkeys(forms))


def parse_shape(raw: object) -> tuple[int, ...]:
    if isinstance(raw, str):
        text = raw.strip()
        inner = text[1:-1] if text[:1] + text[-1:] in ("()", "[]") else text
        parts = [p for p in re.split(r"\s*(?:,|x|×|\s)\s*", inner.strip().casefold()) if p]
        if not parts or not all(p.isdigit() and p.isascii() for p in parts):
            raise _fail("shape", f"{text!r} is not a shape")
        shape = tuple(int(p) for p in parts)
        if text.casefold() not in (form.casefold() for form in shape_forms(shape)):
            dims = [str(v) for v in shape]
            like = dict.fromkeys([shape_forms(shape)[0], f"[{', '.join(dims)}]", "x".join(dims)])
            raise _fail("shape", f"write {text!r} like {' or '.join(like)}")
        return shape
    if (
        isinstance(raw, list | tuple)
        and raw
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in raw)
    ):
        return tuple(raw)
    raise _fail("shape", f"{raw!r} is not a tuple of non-negative integers")


def parse_matching(raw: object, items: Sequence[str], option_ids: Sequence[str]) -> dict[str, str]:
    if isinstance(raw, str):
        pairs = [p for p in re.split(r"\s*[,;\n]\s*", raw.strip().strip("{}")) if p]
        parsed = {}
        for pair in pairs:
            match = re.fullmatch(r"(.+?)\s*(?:=|:|->)\s*(.+)", pair)
            if not match:
                raise _fail("matching", f"{pair!r} is not of the form item=letter")
            parsed[match.group(1).strip("'\"")] = match.group(2).strip("'\"")
        raw = parsed
    if not isinstance(raw, dict):
        raise _fail("matching", f"{raw!r} is not a mapping")
    by_name = {item.casefold(): item for item in items}
    out = {}
    for left, right in raw.items():
        item = by_name.get(str(left).strip().casefold())
        if item is None:
            raise _fail("matching", f"{left!r} is not one of the items {', '.join(items)}")
        out[item] = _choice_id(right, option_ids, "matching")
    missing = [item for item in items if item not in out]
    if missing:
        raise _fail("matching", f"no option given for {', '.join(missing)}")
    return out


def parse_text(raw: object) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise _fail("free_text", "the answer is empty" if isinstance(raw, str) else "not text")
    return raw.strip()


def parse_answer(
    qtype: str,
    raw: object,
    choice_ids: Sequence[str] = (),
    items: Sequence[str] = (),
) -> object:
    """Read ``raw`` as an answer to a question of type ``qtype``, or raise InvalidAnswer."""
    if qtype == "single_choice":
        return parse_single(raw, choice_ids)
    if qtype == "multiple_select":
        return parse_multiple(raw, choice_ids)
    if qtype == "numeric":
        return parse_number(raw)
    if qtype == "shape":
        return parse_shape(raw)
    if qtype == "matching":
        return parse_matching(raw, items, choice_ids)
    if qtype == "free_text":
        return parse_text(raw)
    raise ValueError(f"unknown question type {qtype!r}")


def canonical(qtype: str, value: object) -> str:
    """One text per distinct answer: what item analysis counts and self-check hashes.

    ``value`` is an answer to a question of type ``qtype`` as parse_answer reads it (or a key of
    that type); which type it has depends on ``qtype``, so each branch casts it (no conversion).
    """
    if qtype == "multiple_select":
        picked = cast("Iterable[str]", value)
        return ",".join(sorted(picked)) if picked else "(none)"
    if qtype == "numeric":
        return format_number(cast(float, value))
    if qtype == "shape":
        shape = cast("Sequence[int]", value)
        return "(" + ", ".join(str(v) for v in shape) + ("," if len(shape) == 1 else "") + ")"
    if qtype == "matching":
        pairs = cast("Mapping[str, str]", value)
        return ", ".join(f"{k}={v}" for k, v in sorted(pairs.items()))
    return str(value)


def format_number(value: float) -> str:
    """A number as short text without exponent noise: 16.0 -> "16", 0.1 -> "0.1"."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


# --- free text ----------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """Lower-case words of ``text``; hyphens, slashes and punctuation separate words."""
    return re.findall(r"[a-z0-9√]+", text.casefold().replace("'", "").replace("\u2019", ""))


# --- numeric buckets ----------------------------------------------------------------------------


def bucket(value: float, tolerance: dict) -> str:
    """The bucket of ``value`` for a tolerance {"abs": x} or {"rel": y}: what self-check hashes."""
    if tolerance.get("abs") is not None:
        width = float(tolerance["abs"])
        return format_number(value) if width == 0 else f"a{math.floor(value / width)}"
    if value == 0:
        return "r0"
    sign = "-" if value < 0 else "+"
    return f"r{sign}{math.floor(math.log(abs(value)) / math.log1p(float(tolerance['rel'])))}"


def buckets_around(key: float, tolerance: dict) -> list[str]:
    """Buckets covering [key - tolerance, key + tolerance]: the self-check's accepted window."""
    if tolerance.get("abs") is not None:
        half = float(tolerance["abs"])
    else:
        half = float(tolerance["rel"]) * abs(key)
    if half == 0:
        return [bucket(key, tolerance)]
    lo, hi = key - half, key + half
    found, steps = [], 64
    for i in range(steps + 1):
        b = bucket(lo + (hi - lo) * i / steps, tolerance)
        if b not in found:
            found.append(b)
    return found


# --- hashing and sealing ------------------------------------------------------------------------


def answer_hash(salt: str, question: str, variant: str, answer: str) -> str:
    text = f"key|{salt}|{question}|{variant}|{answer}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _keystream(seed: str, length: int) -> bytes:
    out = b""
    counter = 0
    while len(out) < length:
        out += hashlib.sha256(f"{seed}|{counter}".encode()).digest()
        counter += 1
    return out[:length]


def seal(salt: str, question: str, variant: str, answer: str, payload: dict) -> str:
    """Encrypt ``payload`` so that only someone giving ``answer`` can read it."""
    data = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    stream = _keystream(f"seal|{salt}|{question}|{variant}|{answer}", len(data))
    return base64.b64encode(bytes(a ^ b for a, b in zip(data, stream, strict=True))).decode()


def unseal(salt: str, question: str, variant: str, answer: str, sealed: str) -> dict:
    data = base64.b64decode(sealed)
    stream = _keystream(f"seal|{salt}|{question}|{variant}|{answer}", len(data))
    return json.loads(bytes(a ^ b for a, b in zip(data, stream, strict=True)).decode("utf-8"))


# --- checking against a self-check key ----------------------------------------------------------


def variant_key(question: dict, params: dict) -> str:
    """Which row of a question's self-check table applies: its parameters' values, in order."""
    return "|".join(f"{name}={params[name]}" for name in question.get("params", []))


def _lookup(salt: str, q: dict, variant: str, answer: str) -> dict | None:
    sealed = q["variants"][variant].get(answer_hash(salt, q["id"], variant, answer))
    return None if sealed is None else unseal(salt, q["id"], variant, answer, sealed)


def _result(status: str, fraction: float, feedback: Iterable[str], **extra: object) -> dict:
    return {"status": status, "fraction": fraction, "feedback": [f for f in feedback if f], **extra}


def check_selfcheck(salt: str, question: dict, params: dict, raw: object) -> dict:
    """Check one answer against one question of a self-check key; return a result mapping.

    The mapping has ``status`` (correct, partial, wrong, invalid, unanswered, needs_review),
    ``fraction`` of the points earned (provisional for free text) and ``feedback`` lines.
    """
    qtype = question["type"]
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return _result("unanswered", 0.0, ["No answer given."])
    try:
        value = parse_answer(qtype, raw, question.get("choice_ids", ()), question.get("items", ()))
    except InvalidAnswer as exc:
        return _result("invalid", 0.0, [f"Invalid answer: {exc}."])
    variant = variant_key(question, params)
    if qtype == "free_text":
        note = "Not checked here: free-text answers are marked by hand by your instructor."
        return _result("needs_review", 0.0, [note])
    if qtype in ("multiple_select", "matching"):
        if qtype == "multiple_select":
            parts = sorted(cast("frozenset[str]", value))
        else:
            parts = [f"{k}={v}" for k, v in cast("dict[str, str]", value).items()]
        reactions = [_lookup(salt, question, variant, part) or {} for part in parts]
        right = sum(1 for r in reactions if r.get("correct"))
        wrong = len(reactions) - right
        if qtype == "multiple_select":
            need, n = question["n_correct"], len(question["choice_ids"])
            # right/k - wrong/(n - k), floored at 0 (types/multiple_select.py, docs/quiz.md)
            fraction = max(0.0, min(1.0, right / need - (wrong / (n - need) if wrong else 0.0)))
            exact = right == need and wrong == 0
        else:
            fraction = right / len(question["items"])
            exact = right == len(question["items"])
        feedback = [r.get("feedback", "") for r in reactions if not r.get("correct")]
        if exact:
            whole = _lookup(salt, question, variant, "all:" + canonical(qtype, value)) or {}
            return _result("correct", 1.0, [whole.get("feedback") or "Correct."])
        labels = [r["misconception"] for r in reactions if r.get("misconception")]
        status = "partial" if fraction > 0 else "wrong"
        return _result(status, fraction, feedback or ["Not quite."], misconceptions=labels)
    answer = canonical(qtype, value)
    if qtype == "numeric":
        answer = bucket(cast(float, value), question["tolerance"])
    reaction = _lookup(salt, question, variant, answer)
    if reaction is None:
        feedback = ["Not quite."]
        if qtype == "shape":
            given, ndim = len(cast("tuple[int, ...]", value)), question["ndim"]
            if given != ndim:
                feedback = [f"Your shape has {given} dimensions; the answer has {ndim}."]
        return _result("wrong", 0.0, feedback)
    if reaction.get("correct"):
        return _result("correct", 1.0, [reaction.get("feedback", "Correct.")])
    labels = [reaction["misconception"]] if reaction.get("misconception") else []
    return _result("wrong", 0.0, [reaction.get("feedback") or "Not quite."], misconceptions=labels)
