"""`lms push` against an LTI 1.3 platform (lti1p3platform, tests/lti_platform.py) on 127.0.0.1:
the access token signed with the tool's key and checked by the platform against its public
key, the line item made once and found again, each score as the platform's AGS endpoint records
it, and what a second push sends (nothing), a changed score (that one). The grades are given
here; the hub, nbgrader and the real grading are tests/deploy/test_lti_hub.py's."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from attention_course.errors import UserError
from attention_course.integrations.lms import ags, config, files, keys
from attention_course.integrations.lms.identity import (
    AGS_ENDPOINT,
    CONTEXT,
    CUSTOM,
    DEPLOYMENT,
    ROLES,
    decide,
)
from attention_course.integrations.lms.scores import (
    GRADED,
    NOT_GRADED,
    PENDING,
    AssignmentGrades,
    LmsGrade,
)
from tests.lti_platform import CLIENT_ID, CONTEXT_ID, DEPLOYMENT_ID, INSTRUCTOR, LEARNER, Platform

ASSIGNMENT = "attention_basics"
WHEN = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    root = tmp_path / "course"
    root.mkdir()
    return root


@pytest.fixture
def platform(course: Path):
    keys.make_key(course)
    jwks = {"keys": [keys.public_jwk(keys.read_private(course))]}
    with Platform("http://127.0.0.1:9", tool_keys=jwks) as running:
        yield running


def _lms(platform: Platform) -> config.LmsConfig:
    return config.parse({
        "issuer": platform.issuer, "client_id": CLIENT_ID, "deployments": [DEPLOYMENT_ID],
        "token_url": f"{platform.url}/token",
    })  # fmt: skip


def _launch(course: Path, platform: Platform, lms: config.LmsConfig, sub: str, roles: list[str]):
    """What the hub records of a launch (as hub_auth.py does), from the platform's claims."""
    token = {
        "sub": sub, ROLES: roles, DEPLOYMENT: DEPLOYMENT_ID, CONTEXT: {"id": CONTEXT_ID},
        CUSTOM: {}, AGS_ENDPOINT: {"lineitems": platform.lineitems_url, "scope": list(ags.SCOPES)},
    }  # fmt: skip
    decision = decide(
        token, issuer=lms.issuer, deployments=lms.deployments, contexts=(),
        instructor_account="teacher", assignments=(ASSIGNMENT,), settings=lms.settings,
    )  # fmt: skip
    files.record_launch(course, decision, lms.settings)
    return decision.student_id


def _grades(students: dict[str, LmsGrade]) -> AssignmentGrades:
    return AssignmentGrades(ASSIGNMENT, 35.0, tuple(students.values()))


def test_each_score_is_recorded_once_with_its_progress(course: Path, platform: Platform):
    lms = _lms(platform)
    ada = _launch(course, platform, lms, "u-ada", [LEARNER])
    grace = _launch(course, platform, lms, "u-grace", [LEARNER])
    hal = _launch(course, platform, lms, "u-hal", [LEARNER])
    bob = _launch(course, platform, lms, "u-bob", [LEARNER])
    _launch(course, platform, lms, "u-teacher", [INSTRUCTOR])
    grades = {
        ada: LmsGrade(ada, GRADED, 35.0, 35.0, 0.0, WHEN),
        grace: LmsGrade(grace, GRADED, 31.5, 35.0, 3.5, WHEN),
        hal: LmsGrade(hal, PENDING, None, submitted_at=WHEN, reason="not graded yet"),
        bob: LmsGrade(bob, NOT_GRADED, 0.0, 0.0, 0.0, WHEN, "the notebook is not valid JSON"),
        "never-launched": LmsGrade("never-launched", GRADED, 10.0, 10.0, 0.0, WHEN),
    }
    report = ags.push(ASSIGNMENT, course, lms, _grades(grades))
    assert report.ok and len(report.sent) == 4, report
    assert report.not_sent == ["never-launched: not sent: never launched the hub from the LMS "
                               "(no LMS id)"]  # fmt: skip
    (item,) = platform.lineitems.values()
    made = (item["resourceId"], item["scoreMaximum"], item["tag"])
    assert made == (ASSIGNMENT, 35, "attention-course")
    by_user = {}
    for score in platform.scores[item["id"]]:
        assert score["userId"] not in by_user, "two scores for one student"
        by_user[score["userId"]] = score
    assert set(by_user) == {"u-ada", "u-grace", "u-hal", "u-bob"}
    assert (by_user["u-ada"]["scoreGiven"], by_user["u-ada"]["scoreMaximum"]) == (35.0, 35.0)
    assert by_user["u-grace"]["scoreGiven"] == 31.5
    assert by_user["u-ada"]["gradingProgress"] == "FullyGraded"
    assert by_user["u-ada"]["activityProgress"] == "Completed"
    assert "scoreGiven" not in by_user["u-hal"] and "scoreMaximum" not in by_user["u-hal"]
    assert (by_user["u-hal"]["gradingProgress"], by_user["u-hal"]["activityProgress"]) == (
        "Pending", "Submitted")  # fmt: skip
    assert by_user["u-bob"]["scoreGiven"] == 0.0
    assert "comment" not in by_user["u-bob"], "feedback text left without being chosen"
    assert by_user["u-ada"]["submission"]["submittedAt"] == WHEN.isoformat()
    mode = stat.S_IMODE((course / "lms" / "pushed.jsonl").stat().st_mode)
    assert mode == 0o600

    again = ags.push(ASSIGNMENT, course, lms, _grades(grades))
    assert (again.sent, again.unchanged) == ([], 4)
    assert len(platform.scores[item["id"]]) == 4, "a second push sent scores again"

    grades[hal] = LmsGrade(hal, GRADED, 20.0, 20.0, 0.0, WHEN)
    third = ags.push(ASSIGNMENT, course, lms, _grades(grades))
    assert len(third.sent) == 1 and third.sent[0].startswith(hal), third.sent
    assert platform.scores[item["id"]][-1]["scoreGiven"] == 20.0
    assert len(platform.lineitems) == 1, "the line item was made again"


def test_a_refused_token_sends_nothing_and_records_nothing(course: Path, platform: Platform):
    lms = _lms(platform)
    ada = _launch(course, platform, lms, "u-ada", [LEARNER])
    keys.make_key(course, replace=True)  # a key the platform does not know
    with pytest.raises(UserError, match="access token"):
        ags.push(ASSIGNMENT, course, lms, _grades({ada: LmsGrade(ada, GRADED, 1.0, 1.0)}))
    assert not platform.scores
    assert files.pushed(course) == {}


def test_no_launch_yet_says_how_to_get_the_grade_service(course: Path, platform: Platform):
    with pytest.raises(UserError, match="launch the hub once from the LMS course"):
        ags.push(ASSIGNMENT, course, _lms(platform), _grades({}))


def test_the_tool_key_is_private(course: Path):
    path, made = keys.make_key(course)
    assert made and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert keys.make_key(course) == (path, False)
    path.chmod(0o644)
    with pytest.raises(UserError, match="readable by others"):
        keys.read_private(course)
    jwk = keys.public_jwk(path.read_text())
    assert jwk["kty"] == "RSA" and "d" not in jwk and json.dumps(jwk)


def test_the_lms_folder_follows_no_link(tmp_path: Path):
    """The hub writes the instructor's LMS folder as root: a link planted in its place, or in
    place of one of its files, is never followed."""
    course, elsewhere = tmp_path / "course", tmp_path / "elsewhere"
    course.mkdir()
    elsewhere.mkdir()
    (course / "lms").symlink_to(elsewhere)
    with pytest.raises(UserError, match="a link is refused"):
        files.use_nonce(course, "n1", 0.0)
    (course / "lms").unlink()
    files.use_nonce(course, "n1", 0.0)
    target = elsewhere / "victim"
    target.write_text("kept")
    (course / "lms" / "launches.json").symlink_to(target)
    with pytest.raises(UserError, match="not readable"):
        files.launches(course)
    (course / "lms" / "tool-key.pem").symlink_to(target)
    with pytest.raises(UserError, match="not readable"):
        keys.read_private(course)
    assert target.read_text() == "kept"
    assert files.use_nonce(course, "n2", 0.0) and not files.use_nonce(course, "n2", 0.0)
