"""Who an LTI 1.3 launch is, and what the hub gives them: a validated launch's claims (LTI 1.3
sections 5.1-5.4) -> the hub user (the instructor's account, or the student's stable nbgrader
id), the environment (by the launch's context roles), the assignment to open, and what is
recorded of it. No dependency: the hub's authenticator (hub_auth.py) calls `decide` once the
launch's signature, issuer, audience and nonce are checked.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlparse

from attention_course.settings import LMS_ID_PARAMETERS, Lms

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
ROLES = CLAIM + "roles"
CUSTOM = CLAIM + "custom"
CONTEXT = CLAIM + "context"
RESOURCE_LINK = CLAIM + "resource_link"
DEPLOYMENT = CLAIM + "deployment_id"
TARGET_LINK = CLAIM + "target_link_uri"
LIS = CLAIM + "lis"
AGS_ENDPOINT = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"

# A student id taken as it is: lower-case letters, digits and dashes (a valid account name and
# nbgrader id once prefixed); anything else is hashed, with "_", which the first form never has.
CLEAN = re.compile(r"[a-z0-9][a-z0-9-]*")
ACCOUNT_NAME_MAX = 32  # Linux account names (useradd)
HASH_CHARS = 16
ASSIGNMENT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
ENVIRONMENTS = ("student", "instructor")


class Refused(Exception):
    """A launch the hub refuses; the message says why (the hub's log and the page say it)."""


@dataclass(frozen=True)
class Decision:
    """What the hub does with a launch."""

    hub_user: str  # the hub user: the instructor's account, or the student id
    instructor: bool
    sub: str  # the LMS's id of the user (the launch's `sub`): AGS scores go to it
    student_id: str | None  # the nbgrader student id (None for the instructor)
    assignment: str | None  # the assignment the link opens
    deployment_id: str
    context_id: str
    resource_link_id: str
    lms_ids: dict[str, str] = field(default_factory=dict)  # lms_user_id, login_id, sis_id
    ags: dict | None = None  # the launch's AGS endpoint claim (line items, scopes)


def student_id(value: str, issuer: str, prefix: str) -> str:
    """The nbgrader student id (and account name) of an LMS user id: `prefix` + the id itself
    when it is plain lower-case letters, digits and dashes and short enough, else `prefix` +
    "_" + a hash of the issuer and the id. Stable, and never the same for two users."""
    if CLEAN.fullmatch(value) and len(prefix) + len(value) <= ACCOUNT_NAME_MAX:
        return prefix + value
    digest = hashlib.sha256(f"{issuer}\0{value}".encode()).hexdigest()[:HASH_CHARS]
    return f"{prefix}_{digest}"


def is_instructor(roles: object, settings: Lms) -> bool:
    """Whether a launch's roles (a list of URIs) hold one of the instructor's context roles."""
    return isinstance(roles, list) and any(r in settings.instructor_roles for r in roles)


def _custom(token: dict) -> dict:
    custom = token.get(CUSTOM) or {}
    return custom if isinstance(custom, dict) else {}


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def requested_assignment(token: dict, settings: Lms) -> str:
    """The assignment a launch's link names: its custom parameter, else the `assignment` query
    parameter of its target link (an LMS link of its own per assignment); "" if none."""
    named = _text(_custom(token).get(settings.assignment_parameter))
    if named:
        return named
    query = parse_qs(urlparse(_text(token.get(TARGET_LINK))).query)
    return _text((query.get(settings.assignment_parameter) or [""])[0])


def decide(
    token: dict,
    *,
    issuer: str,
    deployments: tuple[str, ...],
    contexts: tuple[str, ...],
    instructor_account: str,
    assignments: tuple[str, ...],
    settings: Lms,
) -> Decision:
    """The hub's decision on a launch whose signature, issuer, audience and nonce are checked
    (Refused, with the reason, for one the course does not accept)."""
    deployment = _text(token.get(DEPLOYMENT))
    if deployment not in deployments:
        raise Refused(f"deployment {deployment!r} is not one of this course's")
    context = token.get(CONTEXT) or {}
    context_id = _text(context.get("id")) if isinstance(context, dict) else ""
    if contexts and context_id not in contexts:
        raise Refused(f"LMS course (context) {context_id!r} is not this course")
    sub = _text(token.get("sub"))
    if not sub:
        raise Refused("the launch names no user (no sub)")
    custom = _custom(token)
    instructor = is_instructor(token.get(ROLES), settings)
    asked = _text(custom.get(settings.environment_parameter)).lower() or None
    if asked is not None and asked not in ENVIRONMENTS:
        raise Refused(f"unknown environment {asked!r} (known: {', '.join(ENVIRONMENTS)})")
    if asked == "instructor" and not instructor:
        raise Refused(
            f"a launch without an instructor's role asked for the instructor's environment "
            f"(user {sub!r}, roles {token.get(ROLES)!r})"
        )
    assignment = requested_assignment(token, settings) or None
    if assignment is not None and (
        not ASSIGNMENT_NAME.fullmatch(assignment) or assignment not in assignments
    ):
        raise Refused(f"the link names assignment {assignment!r}, which the course does not have")
    if instructor:
        hub_user, student = instructor_account, None
    else:
        if settings.student_id == "sub":
            value = sub
        else:
            name = settings.student_id.removeprefix("custom:")
            value = _text(custom.get(name))
            if not value:
                raise Refused(f"the launch has no custom parameter {name!r} (the student's id)")
        student = hub_user = student_id(value, issuer, settings.student_prefix)
        if student == instructor_account:
            raise Refused(f"student id {student!r} is the instructor's account")
    lms_ids = {name: _text(custom.get(name)) for name in LMS_ID_PARAMETERS}
    lis = token.get(LIS) or {}
    if not lms_ids["sis_id"] and isinstance(lis, dict):
        lms_ids["sis_id"] = _text(lis.get("person_sourcedid"))
    link = token.get(RESOURCE_LINK) or {}
    ags = token.get(AGS_ENDPOINT)
    return Decision(
        hub_user=hub_user,
        instructor=instructor,
        sub=sub,
        student_id=student,
        assignment=assignment,
        deployment_id=deployment,
        context_id=context_id,
        resource_link_id=_text(link.get("id")) if isinstance(link, dict) else "",
        lms_ids={k: v for k, v in lms_ids.items() if v},
        ags=ags if isinstance(ags, dict) else None,
    )


def landing(decision: Decision) -> str:
    """Where the hub sends the user after the launch, under their server's URL (/user/NAME/):
    the instructor to formgrader (the assignment's submissions, when the link names one), a
    student to the assignment's notebook (fetched first if needed, lab_open.py) or to JupyterLab."""
    if decision.instructor:
        if decision.assignment:
            return f"formgrader/manage_submissions/{decision.assignment}"
        return "formgrader"
    if decision.assignment:
        return f"attention-course/open?assignment={decision.assignment}"
    return "lab"
