"""From the LMS and back, with real parts: an LTI 1.3 platform of a third-party library
(lti1p3platform, tests/lti_platform.py) on 127.0.0.1, signing launches with its own key; the
course's JupyterHub deployed as the README says with `--lti` instead of local passwords
(jupyterhub-ltiauthenticator, configurable-http-proxy); Chromium following the OIDC redirects.

A student launches from the platform's link of attention_basics and lands in its notebook
(fetched for them), fills it in and submits; another submits after the due date, a third
after grading. The instructor autogrades and runs `attention-course lms push`: the platform's
AGS endpoint records one score per student, out of nbgrader's maximum, the late one less the
course's late penalty (once), the ungraded one Pending with no number; a second push sends
nothing; a regrade sends the one score that changed. Launches the course refuses are refused
and said in the hub's log: a bad signature, a replayed launch, another platform, a student's
launch of the instructor's link.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import stat
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import pytest
import requests

from attention_course.cli.samples import sample_notebooks
from attention_course.settings import EXCHANGE_ENV
from tests.browser.conftest import SCREENSHOTS
from tests.deploy.conftest import Account
from tests.deploy.hub import (
    SERVER_START_TIMEOUT,
    HubDeployment,
    chromium,
    deploy_hub,
    new_page,
    release,
    screenshot,
    type_solutions,
)
from tests.lti_platform import INSTITUTION_INSTRUCTOR, INSTRUCTOR, LEARNER, Platform

# one venv for tests/deploy/ (tests/conftest.py GROUPS); the whole round trip through a hub and
# Chromium takes minutes: run by scripts/test.sh --long (the suite's LMS tests without the hub,
# tests/integrations/test_lms_*.py, push to the same third-party platform)
pytestmark = [pytest.mark.deploy, pytest.mark.long]

ASSIGNMENT = "attention_basics"
SHOTS = SCREENSHOTS / "lti-hub"
PREFIX = "lti-"  # settings.LMS.student_prefix: the platform's subs are user-<login>
REFUSED = "LTI launch refused: "
# The course's late policy in this test: a tenth of the score off a late submission (an
# nbgrader LateSubmissionPlugin of the course's own, in its nbgrader_config.py).
LATE_POLICY = '''
from nbgrader.plugins import LateSubmissionPlugin


class TenthOffWhenLate(LateSubmissionPlugin):
    """A tenth of the score off a late submission."""

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        return round(score / 10, 2)


c.AssignLatePenalties.plugin_class = TenthOffWhenLate
'''


def student_id(login: str) -> str:
    return f"{PREFIX}user-{login}"


@pytest.fixture(scope="module")
def platform() -> Iterator[Platform]:
    with Platform("http://127.0.0.1:9") as running:  # the hub's address is set once known
        running.user("ada", [LEARNER], {"login_id": "ada", "lms_user_id": "101"})
        running.user("grace", [LEARNER], {"login_id": "grace", "lms_user_id": "102"})
        running.user("hal", [LEARNER], {"login_id": "hal", "lms_user_id": "103"})
        running.user("mallory", [LEARNER, INSTITUTION_INSTRUCTOR])  # a teacher elsewhere
        running.user("teacher", [INSTRUCTOR])
        running.link("basics", {"assignment": ASSIGNMENT})
        running.link("course-admin", {"environment": "instructor"})
        running.link("heads", {"assignment": "masks_and_heads"})  # not released
        yield running


@pytest.fixture(scope="module")
def hub(engine_venv, platform) -> Iterator[HubDeployment]:
    """The course's hub with LTI 1.3 launches from `platform`, attention_basics released, the
    tool's key made by the instructor."""

    def lms_table(hub_url: str, homes: Path) -> str:
        platform.hub_url = hub_url
        return platform.lms_table(home_base=str(homes), format="canvas")

    with deploy_hub(engine_venv, students=0, lms=lms_table, nbgrader_lines=LATE_POLICY) as hub:
        release(hub, ASSIGNMENT)
        made = _as_instructor(hub, "attention-course", "lms", "keys")
        assert made.returncode == 0, made.stderr
        yield hub


def _as_instructor(hub: HubDeployment, program: str, *args: str, timeout: float = 900):
    env = hub.instructor.env(
        PATH=f"{hub.venv.path / 'bin'}:/usr/bin:/bin", **{EXCHANGE_ENV: str(hub.exchange)}
    )
    argv = [hub.venv.bin(program), *args]
    return hub.instructor.run(argv, cwd=hub.course, env=env, timeout=timeout)


def _account(name: str) -> Account:
    entry = pwd.getpwnam(name)
    return Account(name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))


# ---- launching without a browser (the same requests a browser makes)


@dataclass
class Launched:
    status: int  # the hub's answer to the launch (the platform's form post)
    location: str  # where it sends the browser
    text: str
    action: str = ""  # the form the platform made: where it posts, what, with which cookies
    fields: dict | None = None
    cookies: dict | None = None
    session: requests.Session | None = None  # the browser's cookies, the hub's login included


def launch(platform: Platform, login: str, link: str, *, authorize: str = "", tamper=None):
    """Launch `link` as `login` as a browser does: the LMS's page, the hub's login initiation,
    the platform's authentication (`authorize`: another platform's instead), the form post to
    the hub; the hub's answer is not followed (nobody's server is started)."""
    session = requests.Session()
    answer = session.get(platform.launch_url(login, link), allow_redirects=False, timeout=30)
    assert answer.status_code == 302, answer.text[:300]
    answer = session.get(answer.headers["Location"], allow_redirects=False, timeout=30)
    assert answer.status_code == 302, answer.text[:300]
    where = answer.headers["Location"]
    if authorize:
        where = authorize + "?" + urllib.parse.urlsplit(where).query
    form = session.get(where, timeout=30)
    assert form.status_code == 200, form.text[:300]
    action = re.search(r'action="([^"]+)"', form.text).group(1)
    fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', form.text))
    if tamper is not None:
        fields["id_token"] = tamper(fields["id_token"])
    cookies = session.cookies.get_dict()
    done = session.post(action, data=fields, allow_redirects=False, timeout=60)
    return Launched(done.status_code, done.headers.get("Location", ""), done.text, action,
                    fields, cookies, session)  # fmt: skip


def _refusals(hub: HubDeployment) -> list[str]:
    return [
        line.split(REFUSED, 1)[1] for line in hub.hub.log_text().splitlines() if REFUSED in line
    ]


# ---- the student in Chromium


@dataclass
class StudentLaunch:
    url: str  # where the launch landed
    typed: dict[str, str]
    submitted: str


@pytest.fixture(scope="module")
def ada(hub, platform) -> StudentLaunch:
    """Ada launches attention_basics from the LMS in Chromium, lands in its notebook, fills it
    in with the instructor's solution, saves and submits in the Assignments tab."""
    with chromium(SHOTS) as browser:
        page = new_page(browser)
        page.goto(platform.launch_url("ada", "basics"))
        notebook = f"**/user/{student_id('ada')}/lab/tree/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
        page.wait_for_url(notebook, timeout=SERVER_START_TIMEOUT * 1000)
        page.wait_for_selector("#jp-main-statusbar >> text=Idle")
        landed = page.url
        screenshot(page, SHOTS, "student-landed")
        home = Path(pwd.getpwnam(student_id("ada")).pw_dir)
        typed = type_solutions(page, home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", "demo-instructor")
        page.keyboard.press("Control+s")
        page.wait_for_selector(".lm-DockPanel-tabBar .jp-mod-dirty", state="detached")
        page.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
        page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
        fetched = page.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT)
        fetched.first.get_by_role("button", name="Submit").click()
        submitted = page.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT)
        submitted.first.wait_for()
        screenshot(page, SHOTS, "student-submitted")
        text = submitted.first.inner_text()
        page.context.close()
    return StudentLaunch(landed, typed, text)


def test_a_student_launches_from_the_lms_into_the_assignments_notebook(hub, ada):
    name = student_id("ada")
    assert ada.url.endswith(f"/user/{name}/lab/tree/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"), ada.url
    assert set(ada.typed) == {
        "softmax",
        "create_qkv",
        "causal_mask",
        "scaled_dot_product_attention",
    }
    assert ASSIGNMENT in ada.submitted
    home = Path(pwd.getpwnam(name).pw_dir)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700, "a student's home open to the others"
    (inbound,) = [p for p in (hub.exchange / "attention-course" / "inbound").iterdir()
                  if p.name.startswith(f"{name}+{ASSIGNMENT}+")]  # fmt: skip
    cells = {c.get("id"): c.source for c in nbformat.read(inbound / f"{ASSIGNMENT}.ipynb", 4).cells}
    assert cells["softmax"] == ada.typed["softmax"]


def test_a_link_of_an_assignment_not_released_yet_says_so(hub, platform, ada):
    """Ada's server runs (she launched before): the launch goes straight to the link's page."""
    done = launch(platform, "ada", "heads")
    assert done.status == 302, done.text[:300]
    page = done.session.get(hub.hub.url + done.location, timeout=SERVER_START_TIMEOUT)
    assert page.status_code == 404 and page.url.endswith("open?assignment=masks_and_heads")
    assert "masks_and_heads is not released yet" in page.text, page.text[:500]
    assert not (Path(pwd.getpwnam(student_id("ada")).pw_dir) / "masks_and_heads").exists()


def test_the_launch_is_recorded_with_the_instructors_files_and_kept_private(hub, ada):
    folder = hub.course / "lms"
    owner = hub.instructor.uid
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == owner
    for name in ("launches.json", "tool-key.pem", "nonces.json"):
        path = folder / name
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
        assert path.stat().st_uid == owner, f"{name} is not the instructor's"
    book = json.loads((folder / "launches.json").read_text())
    user = book["users"]["user-ada"]
    assert user["student_id"] == student_id("ada") and not user["instructor"]
    assert user["lms_ids"] == {"login_id": "ada", "lms_user_id": "101"}
    assert book["contexts"]["course-context-1"]["ags"]["lineitems"].endswith("/ags/lineitems")


def test_the_instructors_role_gives_the_instructors_account_and_formgrader(hub, platform):
    done = launch(platform, "teacher", "course-admin")
    assert done.status == 302, done.text[:500]
    target = urllib.parse.quote(f"/user/{hub.instructor.name}/formgrader", safe="")
    assert done.location == f"/hub/spawn/{hub.instructor.name}?next={target}", done.location


def test_a_students_launch_of_the_instructors_link_is_refused(hub, platform):
    for login in ("mallory", "hal"):  # an instructor elsewhere in the university, a student
        done = launch(platform, login, "course-admin")
        assert done.status == 403, (login, done.status, done.text[:300])
        assert "asked for the instructor&#39;s environment" in done.text or "asked for" in done.text
    said = [r for r in _refusals(hub) if "asked for the instructor's environment" in r]
    assert any("'user-mallory'" in r for r in said) and any("'user-hal'" in r for r in said), said


def test_a_launch_whose_signature_does_not_hold_is_refused(hub, platform):
    def make_instructor(token: str) -> str:
        head, body, signature = token.split(".")
        claims = json.loads(_unpad(body))
        claims["https://purl.imsglobal.org/spec/lti/claim/roles"] = [INSTRUCTOR]
        return ".".join([head, _pad(json.dumps(claims).encode()), signature])

    done = launch(platform, "hal", "basics", tamper=make_instructor)
    assert done.status == 401, (done.status, done.text[:300])
    assert any("Signature verification failed" in r for r in _refusals(hub)), _refusals(hub)


def test_a_replayed_launch_is_refused(hub, platform):
    first = launch(platform, "grace", "basics")
    assert first.status == 302, first.text[:300]
    again = requests.post(first.action, data=first.fields, cookies=first.cookies,
                          allow_redirects=False, timeout=60)  # fmt: skip
    assert again.status_code == 401, (again.status_code, again.text[:300])
    assert any("nonce was used before" in r for r in _refusals(hub)), _refusals(hub)


def test_another_platforms_launch_is_refused(hub, platform):
    with Platform(platform.hub_url, issuer="https://lms.elsewhere.example") as other:
        other.user("hal", [INSTRUCTOR])
        other.link("basics", {"assignment": ASSIGNMENT})
        done = launch(other, "hal", "basics", authorize=f"{other.url}/authorize")
    assert done.status == 401, (done.status, done.text[:300])
    said = [r for r in _refusals(hub) if "https://lms.elsewhere.example" in r]
    assert said and "is not this course's platform" in said[0], _refusals(hub)


def _pad(raw: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unpad(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ---- grades back


def _submit_as(hub: HubDeployment, login: str, sample: str) -> None:
    """The student (launched already: the hub made their account) fetches and submits from a
    terminal of theirs, as nbgrader's students do."""
    account = _account(student_id(login))
    env = account.env(
        PATH=f"{hub.venv.path / 'bin'}:/usr/bin:/bin",
        JUPYTER_CONFIG_PATH=str(hub.plan.student_config),
    )
    nbgrader = hub.venv.bin("nbgrader")
    if not (account.home / ASSIGNMENT).is_dir():
        done = account.run([nbgrader, "fetch_assignment", ASSIGNMENT], env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    notebook = account.home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    filled = sample_notebooks(ASSIGNMENT, hub.course)[sample]
    account.run(["tee", notebook], input=nbformat.writes(filled), env=env)
    done = account.run([nbgrader, "submit", ASSIGNMENT], env=env)
    assert done.returncode == 0, done.stdout + done.stderr


@dataclass
class Pushes:
    lineitem: dict
    first: list[dict]  # the scores the first push sent
    second_output: str
    after_second: int  # scores the platform holds after the second push
    third: list[dict]  # what the push after the regrade sent
    gradebook: dict[str, tuple[float, float]]  # student -> nbgrader's (score, late penalty)
    maximum: float


def _run_ok(hub: HubDeployment, *args: str) -> str:
    done = _as_instructor(hub, *args)
    assert done.returncode == 0, f"{args}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def pushes(hub, platform, ada) -> Pushes:
    """Ada submitted on time (in Chromium); the due date passes; Grace submits late; the
    instructor collects and autogrades; Hal submits after; the instructor collects and pushes,
    pushes again, autogrades again (Hal graded) with --lms-push."""
    for login in ("grace", "hal"):  # their first launch makes their accounts
        assert launch(platform, login, "basics").status == 302
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    _run_ok(hub, "nbgrader", "db", "assignment", "add", ASSIGNMENT, f"--duedate={now}")
    _submit_as(hub, "grace", "demo-instructor")
    _run_ok(hub, "nbgrader", "collect", ASSIGNMENT)
    _run_ok(hub, "attention-course", "autograde", ASSIGNMENT, "--jobs", "1")
    _submit_as(hub, "hal", "demo-partial")
    _run_ok(hub, "nbgrader", "collect", ASSIGNMENT)
    _run_ok(hub, "attention-course", "lms", "push", ASSIGNMENT)
    (item,) = platform.lineitems.values()
    first = list(platform.scores[item["id"]])
    second = _run_ok(hub, "attention-course", "lms", "push", ASSIGNMENT)
    after_second = len(platform.scores[item["id"]])
    _run_ok(hub, "attention-course", "autograde", ASSIGNMENT, "--jobs", "1", "--lms-push")
    third = platform.scores[item["id"]][after_second:]
    return Pushes(item, first, second, after_second, third, *_gradebook(hub))


def _gradebook(hub: HubDeployment) -> tuple[dict[str, tuple[float, float]], float]:
    """nbgrader's own numbers, read with nbgrader's API: each submission's score and late
    penalty, the assignment's maximum."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{hub.course / 'gradebook.db'}", "attention-course") as gb:
        maximum = float(gb.find_assignment(ASSIGNMENT).max_score)
        found = {
            s.student_id: (float(s.score), float(s.late_submission_penalty or 0))
            for s in gb.assignment_submissions(ASSIGNMENT)
        }
    return found, maximum


def _by_user(scores: list[dict]) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for score in scores:
        assert score["userId"] not in found, f"two scores for {score['userId']}"
        found[score["userId"]] = score
    return found


def test_one_score_per_student_out_of_the_assignments_maximum(pushes):
    scores = _by_user(pushes.first)
    assert set(scores) == {"user-ada", "user-grace", "user-hal"}
    assert pushes.lineitem["scoreMaximum"] == pushes.maximum == 35
    assert pushes.lineitem["resourceId"] == ASSIGNMENT
    ada = scores["user-ada"]
    assert (ada["scoreGiven"], ada["scoreMaximum"]) == (pushes.gradebook[student_id("ada")][0], 35)
    assert (ada["activityProgress"], ada["gradingProgress"]) == ("Completed", "FullyGraded")


def test_the_late_one_is_pushed_less_its_penalty_once(pushes):
    raw, penalty = pushes.gradebook[student_id("grace")]
    assert raw > 0 and penalty == round(raw / 10, 2), (raw, penalty)
    grace = _by_user(pushes.first)["user-grace"]
    assert grace["scoreGiven"] == pytest.approx(raw - penalty)
    assert grace["gradingProgress"] == "FullyGraded"
    assert pushes.gradebook[student_id("ada")][1] == 0, "the one on time was charged"


def test_the_ungraded_one_is_pending_with_no_number(pushes):
    hal = _by_user(pushes.first)["user-hal"]
    assert "scoreGiven" not in hal, hal
    assert (hal["activityProgress"], hal["gradingProgress"]) == ("Submitted", "Pending")


def test_a_second_push_changes_nothing_and_a_regrade_sends_its_one_score(pushes):
    assert pushes.after_second == len(pushes.first) == 3
    assert "0 sent, 3 unchanged" in pushes.second_output, pushes.second_output
    (hal,) = pushes.third
    assert hal["userId"] == "user-hal" and hal["gradingProgress"] == "FullyGraded"
    raw, penalty = pushes.gradebook[student_id("hal")]  # late too: submitted after the due date
    assert penalty > 0 and hal["scoreGiven"] == pytest.approx(raw - penalty)


def test_the_hub_log_holds_no_error(hub, pushes):
    errors = [
        line
        for line in hub.hub.log_text().splitlines()
        if (line.startswith("[E ") or "Traceback" in line)
    ]
    assert not errors, "\n".join(errors)


def test_the_hub_serves_the_tools_public_key_and_never_the_private(hub):
    answer = requests.get(f"{hub.hub.url}/hub/lti13/jwks", timeout=30)
    assert answer.status_code == 200
    (key,) = answer.json()["keys"]
    assert key["kty"] == "RSA" and "d" not in key and key["alg"] == "RS256"
    private = os.stat(hub.course / "lms" / "tool-key.pem")
    assert stat.S_IMODE(private.st_mode) == 0o600
