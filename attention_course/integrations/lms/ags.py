"""`attention-course lms push`: each student's grade to the LMS's gradebook through LTI
Advantage's Assignment and Grade Services (AGS 2.0), the protocol done by pylti1p3 (the `lti`
extra): the access token (a JWT signed with the tool's key), the line items, the scores.

- The grade service's address comes from the LMS's own launches (the hub recorded each LMS
  course's AGS endpoint claim, files.py), or course.toml's `[lms] lineitems`.
- The line item (the LMS's gradebook column) of the assignment: the one an LMS link of the
  assignment came with (a Canvas assignment's own), else the tool's (resourceId = the
  assignment, tag = settings.LMS.line_item_tag), else a new one, made with nbgrader's maximum.
- Each score (scores.py): graded -> scoreGiven and scoreMaximum, Completed / FullyGraded; the
  student's own failure -> 0, Completed / FullyGraded; not graded yet, or a fault of grading
  -> no number, Submitted / Pending; manual grading due -> Submitted / PendingManual. The
  student's submission time goes with it (AGS `submission.submittedAt`).
- Once: a score the platform accepted is recorded (files.py); a push sends only what changed
  since (a regrade that changes a score sends it again; an unchanged one sends nothing, so a
  grade the instructor changed by hand in the LMS stays until the score itself changes).
- Only score and progress leave: no feedback text unless settings `send_comment` is chosen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from attention_course.errors import UserError
from attention_course.integrations.lms import files, keys
from attention_course.integrations.lms.config import LmsConfig
from attention_course.integrations.lms.scores import (
    GRADED,
    NOT_GRADED,
    PENDING_MANUAL,
    AssignmentGrades,
    LmsGrade,
    assignment_grades,
)

SCOPES = (
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
)
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"


class PushError(UserError):
    """The platform refused or did not answer (one line: what and why)."""


@dataclass
class PushReport:
    assignment: str
    lineitems: dict[str, str] = field(default_factory=dict)  # LMS course -> line item
    sent: list[str] = field(default_factory=list)  # one line per score sent
    unchanged: int = 0
    not_sent: list[str] = field(default_factory=list)  # students with no LMS id, and why
    failed: list[str] = field(default_factory=list)  # scores the platform refused

    @property
    def ok(self) -> bool:
        return not self.failed


def score_body(grade: LmsGrade, maximum: float, send_comment: bool = False) -> dict[str, Any]:
    """The AGS score of a grade (without userId and timestamp): what is compared between
    pushes."""
    body: dict[str, Any] = {}
    if grade.state in (GRADED, NOT_GRADED):
        assert grade.score is not None
        body.update(
            scoreGiven=round(grade.score, 6),
            scoreMaximum=maximum,
            activityProgress="Completed",
            gradingProgress="FullyGraded",
        )
    else:
        body.update(
            activityProgress="Submitted",
            gradingProgress="PendingManual" if grade.state == PENDING_MANUAL else "Pending",
        )
    if grade.submitted_at is not None:
        body["submission"] = {"submittedAt": grade.submitted_at.isoformat()}
    if send_comment and grade.reason:
        body["comment"] = grade.reason
    return body


def _session(timeout: float):
    import requests

    class Session(requests.Session):
        """Every request with a time limit (the platform may not answer)."""

        def request(self, *args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("timeout", timeout)
            return super().request(*args, **kwargs)

    session = Session()
    session.headers["User-Agent"] = "attention-course (pylti1p3)"
    return session


def _service(lms: LmsConfig, root: Path, endpoint: dict):
    """pylti1p3's grade service for one LMS course's AGS endpoint claim."""
    from pylti1p3.assignments_grades import AssignmentsGradesService
    from pylti1p3.registration import Registration
    from pylti1p3.service_connector import ServiceConnector

    class Connector(ServiceConnector):
        tokens: dict[str, tuple[str, float]] = {}

        def _get_cached_access_token(self, scope_key: str) -> str | None:
            token, until = self.tokens.get(scope_key, ("", 0.0))
            return token if until > time.time() else None

        def _cache_access_token(self, scope_key: str, access_token: str, expires_in: float):
            self.tokens[scope_key] = (access_token, time.time() + max(0.0, expires_in - 30))

    private = keys.read_private(root, lms.settings)
    registration = (
        Registration()
        .set_issuer(lms.issuer)
        .set_client_id(lms.client_id)
        .set_auth_token_url(lms.token_url)
        .set_tool_private_key(private)
        .set_tool_public_key(keys.public_pem(private))
    )
    if lms.token_audience:
        registration.set_auth_audience(lms.token_audience)
    connector = Connector(registration, _session(lms.settings.http_timeout))
    return AssignmentsGradesService(connector, cast(Any, endpoint))


def _said(exc: Exception) -> str:
    """A platform's refusal in one line: the status and the start of its answer."""
    response = getattr(exc, "response", None)
    if response is None and exc.args and hasattr(exc.args[-1], "status_code"):
        response = exc.args[-1]
    if response is not None:
        text = " ".join((response.text or "").split())[:200]
        return f"{exc.args[0] if exc.args else exc} (HTTP {response.status_code}: {text})"
    return " ".join(str(exc).split())[:300]


def _endpoints(lms: LmsConfig, book: dict) -> dict[str, dict]:
    """LMS course -> its AGS endpoint: course.toml's `lineitems` (for every LMS course the
    students launched from), else each LMS course's as its launches gave it."""
    contexts = book.get("contexts", {})
    if lms.lineitems:
        return {"": {"lineitems": lms.lineitems, "scope": list(SCOPES)}}
    found = {c: v["ags"] for c, v in contexts.items() if isinstance(v.get("ags"), dict)}
    if not found:
        raise UserError(
            "no LMS launch has given the course's grade service yet: launch the hub once from "
            "the LMS course (its AGS endpoint comes with every launch), or set [lms] lineitems"
        )
    return found


def _lineitem(service, assignment: str, maximum: float, link_items: list[str], lms: LmsConfig):
    """The assignment's line item in one LMS course: an LMS link's own, the tool's, or new."""
    from pylti1p3.lineitem import LineItem

    ours = service.find_lineitem_satisfying(
        lambda item: (
            item.get("id") in link_items
            or (
                item.get("resourceId") == assignment
                and item.get("tag") == lms.settings.line_item_tag
            )
        )
    )
    if ours is not None:
        return ours
    if not service.can_create_lineitem():
        raise PushError(
            f"{assignment}: the LMS course has no gradebook column for it and the tool may not "
            "make one (give the tool the line item scope, or link the assignment in the LMS)"
        )
    new = (
        LineItem()
        .set_label(assignment)
        .set_score_maximum(maximum)
        .set_resource_id(assignment)
        .set_tag(lms.settings.line_item_tag)
    )
    return service.find_or_create_lineitem(new, find_by="resource_id")


def push(
    assignment: str,
    root: Path,
    lms: LmsConfig,
    grades: AssignmentGrades | None = None,
    dry_run: bool = False,
) -> PushReport:
    """Push `assignment`'s grades (see the module); `dry_run`: say what would be sent."""
    from pylti1p3.exception import LtiException

    lms.need("token_url")
    grades = grades or assignment_grades(assignment, root)
    book = files.launches(root, lms.settings)
    by_student = {
        u["student_id"]: (sub, u.get("context_id", ""))
        for sub, u in book.get("users", {}).items()
        if u.get("student_id")
    }
    report = PushReport(assignment)
    endpoints = _endpoints(lms, book)
    done = files.pushed(root, lms.settings)
    for context, endpoint in sorted(endpoints.items()):
        students = [g for g in grades.grades if by_student.get(g.student, ("", None))[1] == context]
        if lms.lineitems:  # one grade service for every student who launched
            students = [g for g in grades.grades if g.student in by_student]
        if not students:
            continue
        service = _service(lms, root, endpoint)
        if SCORE_SCOPE not in endpoint.get("scope", []):
            raise PushError(f"the LMS course {context!r} does not let the tool send scores")
        link_items = [
            link["lineitem"]
            for link in book.get("links", {}).values()
            if link.get("assignment") == assignment
            and link.get("context_id") == context
            and link.get("lineitem")
        ]
        try:
            item = _lineitem(service, assignment, grades.maximum, link_items, lms)
        except LtiException as exc:
            raise PushError(f"{assignment}: the LMS's line items: {_said(exc)}") from None
        item_id = item.get_id()
        report.lineitems[context] = item_id
        for grade in students:
            sub = by_student[grade.student][0]
            body = score_body(grade, grades.maximum, lms.settings.send_comment)
            if done.get((item_id, sub), {}).get("score") == body:
                report.unchanged += 1
                continue
            line = f"{grade.student}: {_shown(body)}"
            if dry_run:
                report.sent.append(line + " (dry run: not sent)")
                continue
            try:
                service.put_grade(_grade(sub, body), item)
            except LtiException as exc:
                report.failed.append(f"{grade.student}: not sent: {_said(exc)}")
                continue
            except OSError as exc:  # the platform did not answer (requests' errors are OSErrors)
                report.failed.append(f"{grade.student}: not sent: {_said(exc)}")
                continue
            files.add_pushed(
                root,
                {"lineitem": item_id, "user": sub, "student": grade.student, "score": body,
                 "assignment": assignment, "sent": time.time()},
                lms.settings,
            )  # fmt: skip
            report.sent.append(line)
    launched = {g.student for g in grades.grades if g.student in by_student}
    for grade in grades.grades:
        if grade.student not in launched:
            report.not_sent.append(
                f"{grade.student}: not sent: never launched the hub from the LMS (no LMS id)"
            )
    return report


def _grade(sub: str, body: dict):
    """pylti1p3's Grade of one score body (score_body) for the LMS user `sub`."""
    from pylti1p3.grade import Grade

    score = (
        Grade()
        .set_user_id(sub)
        .set_timestamp(datetime.now(UTC).isoformat())
        .set_activity_progress(body["activityProgress"])
        .set_grading_progress(body["gradingProgress"])
    )
    if "scoreGiven" in body:
        score.set_score_given(body["scoreGiven"]).set_score_maximum(body["scoreMaximum"])
    if "submission" in body:
        score.set_submitted_at(body["submission"]["submittedAt"])
    if "comment" in body:
        score.set_comment(body["comment"])
    return score


def _shown(body: dict) -> str:
    if "scoreGiven" in body:
        return f"{body['scoreGiven']:g} / {body['scoreMaximum']:g} ({body['gradingProgress']})"
    return f"no score ({body['gradingProgress']})"
