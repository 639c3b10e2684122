"""A launch's claims -> the hub's decision (integrations/lms/identity.py): which launches the
course accepts, who gets the instructor's environment, the stable student id, the assignment;
and course.toml's [lms] table as its schema reads it."""

from __future__ import annotations

import pytest

from attention_course.errors import UserError
from attention_course.integrations.lms import config
from attention_course.integrations.lms.identity import (
    CONTEXT,
    CUSTOM,
    DEPLOYMENT,
    ROLES,
    TARGET_LINK,
    Refused,
    decide,
    landing,
    student_id,
)
from attention_course.settings import LMS
from tests.lti_platform import INSTITUTION_INSTRUCTOR, INSTRUCTOR, LEARNER

ISSUER = "https://lms.example.edu"
TA = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"


def token(sub="u1", roles=(LEARNER,), custom=None, **claims) -> dict:
    found = {"sub": sub, ROLES: list(roles), DEPLOYMENT: "d1", CONTEXT: {"id": "c1"},
             CUSTOM: dict(custom or {})}  # fmt: skip
    found.update(claims)
    return found


def judge(claims: dict, contexts=("c1",), settings=LMS):
    return decide(
        claims, issuer=ISSUER, deployments=("d1",), contexts=contexts,
        instructor_account="teacher", assignments=("attention_basics", "attention_quiz"),
        settings=settings,
    )  # fmt: skip


def test_a_learner_is_the_student_with_a_stable_prefixed_id():
    first, again = judge(token("4f2a")), judge(token("4f2a"))
    assert first.student_id == again.student_id == first.hub_user == "lti-4f2a"
    assert not first.instructor and first.sub == "4f2a"


@pytest.mark.parametrize(
    "sub",
    ["535fa085-f9b4-4a4a-8c40-7a5b29c1b1c8", "Ada.Lovelace", "root", "teacher", "../x", "a" * 40],
)
def test_any_lms_id_is_a_safe_account_name_and_never_anothers(sub):
    made = student_id(sub, ISSUER, "lti-")
    assert made.startswith("lti-") and len(made) <= 32
    assert all(c.isalnum() or c in "-_" for c in made) and made == made.lower()
    assert made not in ("root", "teacher") and student_id(sub, "https://other", "lti-") != "teacher"
    assert student_id(sub + "x", ISSUER, "lti-") != made


def test_a_hashed_id_never_equals_a_plain_one():
    hashed = student_id("Ada", ISSUER, "lti-")
    assert "_" in hashed and student_id(hashed.removeprefix("lti-"), ISSUER, "lti-") != hashed


@pytest.mark.parametrize("roles", [[INSTRUCTOR], [LEARNER, TA], ["Instructor"]])
def test_an_instructors_context_role_gives_the_instructors_account(roles):
    decision = judge(token("t1", roles))
    assert decision.instructor and decision.hub_user == "teacher" and decision.student_id is None
    assert landing(decision) == "formgrader"


def test_an_institution_role_is_not_the_courses():
    decision = judge(token("m1", [LEARNER, INSTITUTION_INSTRUCTOR]))
    assert not decision.instructor and decision.hub_user == "lti-m1"


@pytest.mark.parametrize("roles", [[LEARNER], [LEARNER, INSTITUTION_INSTRUCTOR], []])
def test_a_student_asking_for_the_instructors_environment_is_refused(roles):
    with pytest.raises(Refused, match="asked for the instructor's environment"):
        judge(token("s1", roles, {"environment": "instructor"}))


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({DEPLOYMENT: "d2"}, "deployment 'd2' is not one of this course's"),
        ({CONTEXT: {"id": "c9"}}, "context) 'c9' is not this course"),
        ({CONTEXT: None}, "context) '' is not this course"),
        ({"sub": ""}, "names no user"),
        ({CUSTOM: {"assignment": "masks_and_heads"}}, "which the course does not have"),
        ({CUSTOM: {"assignment": "../../etc"}}, "which the course does not have"),
        ({CUSTOM: {"environment": "root"}}, "unknown environment"),
    ],
)
def test_launches_the_course_does_not_accept(claims, reason):
    with pytest.raises(Refused, match=reason.replace("(", r"\(").replace(")", r"\)")):
        judge(token() | claims)


def test_the_assignment_comes_from_the_custom_parameter_or_the_target_link():
    by_custom = judge(token(custom={"assignment": "attention_basics"}))
    assert landing(by_custom) == "attention-course/open?assignment=attention_basics"
    by_link = judge(token(**{TARGET_LINK: "https://hub.example/hub?assignment=attention_quiz"}))
    assert by_link.assignment == "attention_quiz"
    assert landing(judge(token())) == "lab"


def test_a_custom_student_id_never_falls_back_to_sub():
    settings = config.parse({"issuer": ISSUER, "client_id": "c", "deployments": ["d1"],
                             "student_id": "custom:login_id"}).settings  # fmt: skip
    assert judge(token(custom={"login_id": "ada"}), settings=settings).student_id == "lti-ada"
    with pytest.raises(Refused, match="no custom parameter 'login_id'"):
        judge(token(), settings=settings)


def test_the_lms_ids_are_kept_for_the_gradebook_exports():
    claims = token(custom={"lms_user_id": "17", "login_id": "ada"},
                   **{"https://purl.imsglobal.org/spec/lti/claim/lis":
                      {"person_sourcedid": "SIS-9"}})  # fmt: skip
    assert judge(claims).lms_ids == {"lms_user_id": "17", "login_id": "ada", "sis_id": "SIS-9"}


BASE = {"issuer": ISSUER, "client_id": "c", "deployments": ["d1"]}


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({**BASE, "issuer": ""}, "needs issuer"),
        ({k: v for k, v in BASE.items() if k != "deployments"}, "needs deployments"),
        ({**BASE, "deployments": "d1"}, "deployments must be a list"),
        ({**BASE, "token_url": "ftp://x"}, "token_url must be an http"),
        ({**BASE, "colour": "red"}, "colour: not a setting"),
        ({**BASE, "format": "blackboard"}, "format must be one of"),
        ({**BASE, "student_prefix": "1"}, "student_prefix must start with a letter"),
        ({**BASE, "student_id": "email"}, 'student_id must be "sub"'),
        ({**BASE, "http_timeout": -1}, "http_timeout must be a positive number"),
        ({**BASE, "send_comment": "yes"}, "send_comment must be true or false"),
    ],
)
def test_the_lms_table_is_checked_with_one_line(table, said):
    with pytest.raises(UserError, match=said):
        config.parse(table)


def test_a_table_overrides_the_settings_it_names():
    found = config.parse({**BASE, "http_timeout": 5, "instructor_roles": ["Mentor"]})
    assert found.settings.http_timeout == 5.0 and found.settings.instructor_roles == ("Mentor",)
    assert found.settings.student_prefix == LMS.student_prefix
    with pytest.raises(UserError, match="needs token_url"):
        found.need("token_url")
