"""Self-check keys: what students receive to check their own answers, without plaintext answers.

The instructor builds a key from a bank (``attention-course quiz export QUIZ --format
selfcheck``). It holds the prompts, the choices (without saying which are right), the parameter
lists students' numbers are drawn from, and for every answer that earns a reaction a salted hash
with its reaction sealed under that answer (see quiz/answer_core.py). Limits, said in the help
too: a student can still try every choice offline, and a numeric key can be recovered by hashing
candidate numbers; numeric answers are accepted within a window of up to twice the tolerance.
"""

from __future__ import annotations

import secrets
from typing import Any

from attention_course import settings
from attention_course.quiz import types
from attention_course.quiz.answer_core import answer_hash, check_selfcheck, seal, variant_key
from attention_course.quiz.checking import Result
from attention_course.quiz.model import Bank, Question
from attention_course.quiz.seeding import draw_parameters, variant_of
from attention_course.quiz.variants import (
    Instance,
    answer_parameters,
    instantiate,
    variant_parameters,
)

FORMAT_NAME = "attention-course-selfcheck"
NOTICE = (
    "Self-check key: answers are stored as salted hashes, so they cannot be read here, but they "
    "can be found by trying (every choice, or candidate numbers). It is for practice, not grading."
)


def _entries(salt: str, inst: Instance, vkey: str) -> dict[str, str]:
    q = inst.question
    out: dict[str, str] = {}

    def put(answer: str, payload: dict[str, Any], overwrite: bool = True) -> None:
        digest = answer_hash(salt, q.id, vkey, answer)
        if overwrite or digest not in out:
            payload = {k: v for k, v in payload.items() if v not in (None, "", False)}
            out[digest] = seal(salt, q.id, vkey, answer, payload)

    types.of(q).selfcheck_entries(inst, put)
    return out


def _question_spec(bank: Bank, q: Question, salt: str) -> dict[str, Any]:
    qtype = types.of(q)
    spec: dict[str, Any] = {
        "id": q.id,
        "type": q.type,
        "section": q.section,
        "points": q.points,
        "prompt": q.prompt,
        "format": qtype.answer_format,
        "params": answer_parameters(q),
        **qtype.selfcheck_fields(q),
    }
    variants: dict[str, dict[str, str]] = {}
    for variant in range(bank.variant_count):
        params = variant_parameters(bank, variant)
        vkey = variant_key(spec, params)
        if vkey in variants:
            continue
        inst = instantiate(bank, q, variant)
        spec.update(qtype.selfcheck_variant(inst))
        variants[vkey] = _entries(salt, inst, vkey)
    spec["variants"] = variants
    return spec


def build_selfcheck(bank: Bank, salt: str | None = None) -> dict[str, Any]:
    """The self-check key of ``bank``: plain data, ready for JSON."""
    salt = salt or secrets.token_hex(settings.SALT_BYTES)
    return {
        "format": FORMAT_NAME,
        "version": settings.SELFCHECK_FORMAT_VERSION,
        "notice": NOTICE,
        "quiz": bank.quiz,
        "title": bank.title,
        "salt": salt,
        "variant_count": bank.variant_count,
        "parameters": bank.parameters,
        "questions": [
            _question_spec(bank, q, salt)
            for q in bank.questions
            if "selfcheck" in types.of(q).exports  # others are left out (exports.left_out)
        ],
    }


def validate_selfcheck(data: Any) -> None:
    """Raise ValueError (one line) if ``data`` is not a self-check key this version can read."""
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ValueError(f'not a self-check key (no "format": "{FORMAT_NAME}")')
    if data.get("version") != settings.SELFCHECK_FORMAT_VERSION:
        raise ValueError(f"self-check key version {data.get('version')!r} is not supported")
    for key in ("quiz", "salt", "variant_count", "parameters", "questions"):
        if key not in data:
            raise ValueError(f"self-check key has no {key!r}")


def student_parameters(data: dict[str, Any], student_id: str) -> dict[str, Any]:
    variant = variant_of(data["quiz"], student_id, data["variant_count"])
    return draw_parameters(data["quiz"], variant, data["parameters"])


def prompt_for(data: dict[str, Any], question: dict[str, Any], student_id: str) -> str:
    params = student_parameters(data, student_id)
    return question["prompt"].format(**params) if data["parameters"] else question["prompt"]


def check(data: dict[str, Any], question: dict[str, Any], student_id: str, raw: object) -> Result:
    """Check one answer against the key, as a :class:`Result` like the bank's grader gives."""
    params = student_parameters(data, student_id)
    out = check_selfcheck(data["salt"], question, params, raw)
    return Result(
        question=question["id"],
        status=out["status"],
        fraction=out["fraction"],
        points=question["points"],
        feedback=out["feedback"],
        misconceptions=out.get("misconceptions", []),
    )
