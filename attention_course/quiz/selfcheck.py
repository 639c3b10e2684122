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
from attention_course.quiz.answer_core import (
    FORMATS,
    answer_hash,
    buckets_around,
    canonical,
    check_selfcheck,
    seal,
    variant_key,
)
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


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def _entries(salt: str, inst: Instance, vkey: str) -> dict[str, str]:
    q = inst.question
    out: dict[str, str] = {}

    def put(answer: str, payload: dict[str, Any], overwrite: bool = True) -> None:
        digest = answer_hash(salt, q.id, vkey, answer)
        if overwrite or digest not in out:
            payload = {k: v for k, v in payload.items() if v not in (None, "", False)}
            out[digest] = seal(salt, q.id, vkey, answer, payload)

    wrong_label = q.misconception
    if q.type == "single_choice":
        for c in q.choices:
            ok = c.id == inst.key
            put(
                c.id,
                {
                    "correct": ok,
                    "feedback": _join(c.feedback, q.explanation) if ok else c.feedback,
                    "misconception": None if ok else (c.misconception or wrong_label),
                },
            )
    elif q.type == "multiple_select":
        for c in q.choices:
            put(
                c.id,
                {"correct": c.correct, "feedback": c.feedback, "misconception": c.misconception},
            )
        put("all:" + canonical(q.type, inst.key), {"correct": True, "feedback": q.explanation})
    elif q.type == "matching":
        for item in q.items:
            for o in q.choices:
                ok = inst.key[item] == o.id
                payload = {"correct": ok}
                if not ok:
                    payload.update(
                        feedback=o.feedback, misconception=o.misconception or wrong_label
                    )
                put(f"{item}={o.id}", payload)
        put("all:" + canonical(q.type, inst.key), {"correct": True, "feedback": q.explanation})
    elif q.type in ("numeric", "shape"):
        tol = {"abs": q.tolerance.abs, "rel": q.tolerance.rel} if q.type == "numeric" else None

        def forms(value: Any) -> list[str]:
            return buckets_around(value, tol) if tol else [canonical(q.type, value)]

        for answer in forms(inst.key):
            put(answer, {"correct": True, "feedback": q.explanation})
        for w in inst.wrong_answers:
            payload = {"feedback": w.feedback, "misconception": w.misconception or wrong_label}
            for answer in forms(w.value):
                put(answer, payload, overwrite=False)
    return out


def _question_spec(bank: Bank, q: Question, salt: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "id": q.id,
        "type": q.type,
        "section": q.section,
        "points": q.points,
        "prompt": q.prompt,
        "format": FORMATS[q.type],
        "params": answer_parameters(q),
    }
    if q.type in ("single_choice", "multiple_select", "matching"):
        spec["choices"] = [{"id": c.id, "text": c.text} for c in q.choices]
        spec["choice_ids"] = [c.id for c in q.choices]
    if q.type == "multiple_select":
        spec["n_correct"] = sum(c.correct for c in q.choices)
    if q.type == "matching":
        spec["items"] = list(q.items)
    if q.type == "numeric":
        spec["tolerance"] = {"abs": q.tolerance.abs, "rel": q.tolerance.rel}
    variants: dict[str, dict[str, str]] = {}
    for variant in range(bank.variant_count):
        params = variant_parameters(bank, variant)
        vkey = variant_key(spec, params)
        if vkey in variants:
            continue
        inst = instantiate(bank, q, variant)
        if q.type == "shape":
            spec["ndim"] = len(inst.key)
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
        "questions": [_question_spec(bank, q, salt) for q in bank.questions],
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
