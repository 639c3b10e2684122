"""course.toml's `[lms]` table: the course's LTI 1.3 platform registration, and the LMS
settings it overrides (settings.LMS). Its schema, every key:

    [lms]
    issuer = "https://canvas.instructure.com"   # the platform's issuer (the launches' `iss`)
    client_id = "10000000000042"                # the tool's client id on the platform
    deployments = ["17:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"]   # accepted deployment ids
    authorize_url = "https://canvas.example.edu/api/lti/authorize_redirect"  # OIDC auth
    jwks_url = "https://canvas.example.edu/api/lti/security/jwks"   # the platform's keys
    token_url = "https://canvas.example.edu/login/oauth2/token"     # AGS access tokens
    # optional
    contexts = ["4dde05e8ca1973bcca9bffc13e1548820eee93a3"]   # only these LMS courses
    token_audience = "https://canvas.instructure.com/login/oauth2/token"  # if not token_url
    lineitems = "https://canvas.example.edu/api/lti/courses/7/line_items"  # else a launch's
    format = "canvas"                            # or "moodle": the CSV export's default
    # and any field of settings.Lms: student_id, student_prefix, instructor_roles, ...
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from attention_course.errors import UserError
from attention_course.settings import COURSE_FILE, LMS, LMS_FORMATS, Lms

REQUIRED = ("issuer", "client_id", "deployments")
URLS = ("authorize_url", "jwks_url", "token_url", "token_audience", "lineitems")


@dataclass(frozen=True)
class LmsConfig:
    """One course's platform, as course.toml declares it."""

    issuer: str
    client_id: str
    deployments: tuple[str, ...]
    contexts: tuple[str, ...] = ()
    authorize_url: str = ""
    jwks_url: str = ""
    token_url: str = ""
    token_audience: str = ""
    lineitems: str = ""
    format: str = ""
    settings: Lms = field(default_factory=lambda: LMS)

    def need(self, *names: str) -> None:
        """UserError unless course.toml's [lms] gives each of `names` (what a step needs)."""
        missing = [n for n in names if not getattr(self, n)]
        if missing:
            raise UserError(f"{COURSE_FILE} [lms] needs {', '.join(missing)} for this")


def _text(table: dict, name: str) -> str:
    value = table.get(name, "")
    if not isinstance(value, str):
        raise UserError(f"{COURSE_FILE} [lms] {name} must be a string")
    return value.strip()


def _names(table: dict, name: str) -> tuple[str, ...]:
    value = table.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise UserError(f"{COURSE_FILE} [lms] {name} must be a list of strings")
    return tuple(v.strip() for v in value)


def _settings(table: dict) -> Lms:
    """settings.LMS with the table's overrides of its fields, each of the field's type."""
    overrides = {}
    for f in fields(Lms):
        if f.name not in table:
            continue
        default, value = getattr(LMS, f.name), table[f.name]
        if isinstance(default, tuple):
            value = _names(table, f.name)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise UserError(f"{COURSE_FILE} [lms] {f.name} must be true or false")
        elif isinstance(default, int | float):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise UserError(f"{COURSE_FILE} [lms] {f.name} must be a positive number")
            value = type(default)(value)
        else:
            value = _text(table, f.name)
        overrides[f.name] = value
    found = replace(LMS, **overrides)
    if not found.student_prefix or not found.student_prefix[0].isalpha():
        raise UserError(f"{COURSE_FILE} [lms] student_prefix must start with a letter")
    if found.student_id != "sub" and not found.student_id.startswith("custom:"):
        raise UserError(
            f'{COURSE_FILE} [lms] student_id must be "sub" or "custom:NAME" (a custom parameter)'
        )
    return found


def parse(table: object) -> LmsConfig:
    """The [lms] table's config (UserError, one line, for anything wrong in it)."""
    if not isinstance(table, dict):
        raise UserError(f"{COURSE_FILE} [lms] must be a table")
    known = {f.name for f in fields(LmsConfig)} - {"settings"}
    known |= {f.name for f in fields(Lms)}
    unknown = sorted(set(table) - known)
    if unknown:
        raise UserError(f"{COURSE_FILE} [lms] {unknown[0]}: not a setting")
    for name in REQUIRED:
        if not table.get(name):
            raise UserError(f"{COURSE_FILE} [lms] needs {name}")
    values = {name: _text(table, name) for name in ("issuer", "client_id", "format", *URLS)}
    for name in URLS:
        if values[name] and not values[name].startswith(("https://", "http://")):
            raise UserError(f"{COURSE_FILE} [lms] {name} must be an http(s) address")
    if values["format"] and values["format"] not in LMS_FORMATS:
        raise UserError(f"{COURSE_FILE} [lms] format must be one of {', '.join(LMS_FORMATS)}")
    return LmsConfig(
        deployments=_names(table, "deployments"),
        contexts=_names(table, "contexts"),
        settings=_settings(table),
        **values,
    )


def load(root: Path) -> LmsConfig | None:
    """The course's [lms] table, or None when it has none."""
    path = root / COURSE_FILE
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: not readable ({exc})") from None
    return parse(data["lms"]) if "lms" in data else None


def require(root: Path) -> LmsConfig:
    """The course's [lms] table (UserError saying how to declare it when there is none)."""
    found = load(root)
    if found is None:
        raise UserError(
            f"{root / COURSE_FILE} has no [lms] table: declare the course's LTI 1.3 platform "
            "there (docs/instructors.md, 'The LMS')"
        )
    return found
