"""The "Check with the course's graders" button of the students' JupyterLab, in Chromium through
the course's JupyterHub (the deploy tests' one, tests/deploy/conftest.py `course_hub`: deployed
as the README says, `--checks` included, one check per assignment per hour). A student opens
the fetched notebook, types partly right solutions, presses the button (which saves the
notebook), is told what happens while the graders work, reads the PASS/FAIL lines and hints
whole at 1400 and 900 px, presses again and is told, in her own time zone, when her next check
is allowed; another student's page sees none of her checks; the instructor's list has them.
Screenshots go to the browser tests' folder, under hub/check/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from zoneinfo import ZoneInfo

import nbformat
import pytest

from tests.browser.conftest import SCREENSHOTS
from tests.browser.page_checks import DIALOG_FIT, LINES
from tests.deploy.conftest import CHECK_WINDOW
from tests.deploy.hub import (
    HubDeployment,
    chromium,
    log_in_page,
    new_page,
    release,
    screenshot,
    type_solutions,
)

pytestmark = pytest.mark.deploy  # one venv for tests/deploy/ (tests/conftest.py GROUPS)

ASSIGNMENT = "attention_basics"
SHOTS = SCREENSHOTS / "hub" / "check"
TIME_ZONE = "Asia/Kolkata"  # the student's: UTC+5:30, so no minute of it is UTC's
BUTTON = "Check with graders"
CHECK_TIMEOUT_MS = 300_000  # a check queued behind others on a busy machine
TOOLBAR = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-NotebookPanel-toolbar"
DIALOG = ".jp-Dialog.ac-check-dialog"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Chromium for the module; this run's screenshots only in its folder."""
    with chromium(SHOTS) as browser:
        yield browser


def _shot(page, name: str) -> None:
    screenshot(page, SHOTS, name)


def _fetch(deployment: HubDeployment, student) -> None:
    """The student fetches the assignment, as `nbgrader fetch_assignment` in a terminal of her
    JupyterLab (the students' configuration names the exchange)."""
    venv = deployment.venv
    env = student.env(
        PATH=f"{venv.path / 'bin'}:/usr/bin:/bin",
        JUPYTER_CONFIG_PATH=str(deployment.plan.student_config),
    )
    done = student.run([venv.bin("nbgrader"), "fetch_assignment", ASSIGNMENT], env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def _fit(page, width: int) -> dict:
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_function("w => document.documentElement.clientWidth === w", arg=width)
    lines = f"{DIALOG} .ac-check-line, {DIALOG} .ac-check p"
    return {**page.evaluate(DIALOG_FIT, lines), **page.evaluate(LINES, lines)}


def _close(page) -> None:
    page.locator(DIALOG).get_by_role("button", name="Close").click()
    page.locator(DIALOG).wait_for(state="detached")


def _palette(page, command: str) -> None:
    """Run a command from JupyterLab's palette. A busy machine's JupyterLab may let the shortcut
    go by, or not have registered the course's commands yet (its extensions still loading): the
    palette is closed and asked again until the command is in it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    search = page.locator(".lm-CommandPalette-input")
    item = page.locator(".lm-CommandPalette-item", has_text=command).first
    for _ in range(6):
        page.keyboard.press("Control+Shift+c")
        try:
            search.wait_for(state="visible", timeout=10_000)
            search.fill(command)
            item.wait_for(timeout=20_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    # By keyboard: the palette runs its active item, the first that matches (a click may find
    # the item re-rendered, detached, each time the lab tells the palette a command changed).
    item.and_(page.locator(".lm-mod-active")).wait_for()
    page.keyboard.press("Enter")


def _instructors_list(deployment: HubDeployment) -> list[dict]:
    """Every check, as the instructor lists them (`attention-course hub-checks --json`)."""
    shown = deployment.instructor.run(
        [deployment.venv.bin("attention-course"), "hub-checks", "--course", deployment.course,
         "--json"],
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    return [json.loads(line) for line in shown.stdout.splitlines()]


@pytest.fixture(scope="module")
def pressed(course_hub, browser) -> dict:
    """The third student, in Chromium in her own time zone: logs in on the hub's page, opens
    the fetched notebook, types the partly done sample's solutions (unsaved), presses Check,
    reads the answer at two widths, then presses again."""
    deployment = course_hub
    student = deployment.students[2]
    release(deployment, ASSIGNMENT)
    _fetch(deployment, student)
    page = new_page(browser, timezone_id=TIME_ZONE, locale="en-GB")
    page.set_viewport_size({"width": 1400, "height": 900})
    log_in_page(page, deployment.hub, student)
    page.goto(f"{deployment.hub.url}/user/{student.name}/lab/tree/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")
    page.wait_for_selector("#jp-main-statusbar >> text=Idle")

    path = student.home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    typed = type_solutions(page, path, "demo-partial")
    assert page.locator(".lm-DockPanel-tabBar .jp-mod-dirty").count() == 1  # not saved yet

    page.locator(TOOLBAR).get_by_role("button", name=BUTTON).click()
    waiting = page.locator(f"{DIALOG} .ac-check-status", has_text="Checking")
    waiting.wait_for()
    said_while_waiting = page.locator(f"{DIALOG} .ac-check").inner_text()
    _shot(page, "waiting")
    answered = page.locator(f"{DIALOG} .ac-check-feedback, {DIALOG} .ac-check-refused")
    answered.first.wait_for(timeout=CHECK_TIMEOUT_MS)
    assert page.locator(f"{DIALOG} .ac-check-feedback").count() == 1, (
        page.locator(f"{DIALOG} .ac-check").inner_text() + deployment.hub.log_text()[-3000:]
    )
    fits = {}
    for width in (1400, 900):  # a laptop's window, and half of a wide screen
        fits[width] = _fit(page, width)
        _shot(page, f"answer-{width}")
    answer = page.locator(f"{DIALOG} .ac-check").inner_text()
    lines = page.locator(f"{DIALOG} .ac-check-line").all_inner_texts()
    _close(page)

    page.set_viewport_size({"width": 1400, "height": 900})
    page.locator(TOOLBAR).get_by_role("button", name=BUTTON).click()
    page.locator(f"{DIALOG} .ac-check-refused").wait_for(timeout=CHECK_TIMEOUT_MS)
    _shot(page, "refused")
    refused = page.locator(f"{DIALOG} .ac-check").inner_text()
    next_allowed = page.locator(f"{DIALOG} .ac-check-next time")
    next_iso, next_text = next_allowed.get_attribute("datetime"), next_allowed.inner_text()
    _close(page)

    _palette(page, "My checks with the course's graders")
    page.locator(f"{DIALOG} .ac-check-item").first.wait_for()
    own_list = page.locator(f"{DIALOG} .ac-check-summary").all_inner_texts()
    _close(page)
    page.context.close()
    return {
        "student": student,
        "typed": typed,
        "saved": nbformat.read(path, 4),
        "said_while_waiting": said_while_waiting,
        "answer": answer,
        "lines": lines,
        "fits": fits,
        "refused": refused,
        "next_iso": next_iso,
        "next_text": next_text,
        "own_list": own_list,
        "records": _instructors_list(deployment),
    }


def _her_checks(pressed) -> list[dict]:
    return [r for r in pressed["records"] if r["student"] == pressed["student"].name]


def test_the_button_saves_the_notebook_and_says_what_happens_while_it_waits(pressed):
    cells = {c.get("id"): c.source for c in pressed["saved"].cells}
    for cell_id, code in pressed["typed"].items():
        assert cells[cell_id] == code, f"{cell_id}: the checked notebook is not what was typed"
    said = pressed["said_while_waiting"]
    assert f"Checking {ASSIGNMENT}.ipynb with the course's graders" in said, said
    assert "hidden graders" in said and "few seconds" in said and "Waiting: " in said, said


def test_the_student_reads_the_pass_fail_lines_and_hints_the_service_recorded(pressed):
    (record,) = _her_checks(pressed)
    assert record["state"] == "graded" and 0 < record["score"] < record["max_score"]
    recorded = [line.strip() for line in record["feedback"].splitlines() if line.strip()]
    assert [line.strip() for line in pressed["lines"]] == recorded  # all of it, as it was sent
    answer = pressed["answer"]
    assert "PASS [" in answer and "FAIL [" in answer, answer
    assert f"{ASSIGNMENT}: {record['score']:g} / {record['max_score']:g} points" in answer
    assert f"Checks of {ASSIGNMENT} left: 0 (1 per hour)." in answer, answer
    for hidden in ("seed", "grader_tests", "reference", "def test_"):
        assert hidden not in answer, hidden  # nothing of the grading side


def test_every_line_of_the_answer_is_whole_at_1400_and_900_px(pressed):
    for width, fit in pressed["fits"].items():
        assert fit["wider"] == [] and fit["cut"] == [] and not fit["outside"], (width, fit)
        assert fit["blocks"] >= 20 and fit["wrapped"] >= 1, (width, fit)  # long hints, wrapped


def test_the_second_press_says_when_the_next_check_is_allowed_in_her_time(pressed):
    (record,) = _her_checks(pressed)
    assert "you have used the 1 check of attention_basics allowed in 1 hour" in pressed["refused"]
    allowed = datetime.fromisoformat(pressed["next_iso"].replace("Z", "+00:00"))
    asked = datetime.fromisoformat(record["requested"])
    assert allowed.timestamp() == pytest.approx(asked.timestamp() + CHECK_WINDOW, abs=1)
    local = allowed.astimezone(ZoneInfo(TIME_ZONE))
    assert f"{local:%H:%M}" in pressed["next_text"], pressed["next_text"]
    assert "GMT+5:30" in pressed["next_text"] or "IST" in pressed["next_text"]
    assert len(_her_checks(pressed)) == 1  # the refused press is no check


def test_her_checks_are_hers_and_the_instructors_list_has_them(course_hub, browser, pressed):
    (record,) = _her_checks(pressed)
    (summary,) = pressed["own_list"]
    assert summary.startswith(f"{ASSIGNMENT}, asked ") and "graded" in summary, summary
    other = course_hub.students[1]
    page = new_page(browser)
    log_in_page(page, course_hub.hub, other)
    _palette(page, "My checks with the course's graders")
    listed = page.locator(f"{DIALOG} .ac-check")
    listed.locator(".ac-check-none, .ac-check-item").first.wait_for()
    _shot(page, "another-students-list")
    # exactly the other student's own checks (none, unless the service's tests gave some)
    his = [r for r in _instructors_list(course_hub) if r["student"] == other.name]
    assert listed.locator(".ac-check-item").count() == len(his), listed.inner_text()
    if not his:
        assert "no checks with the course's graders yet" in listed.inner_text()
    _close(page)
    hers = f"/user/{pressed['student'].name}/attention-course/hub-check/checks"
    status, body = page.evaluate(
        "async u => { const r = await fetch(u); return [r.status, await r.text()]; }", hers
    )
    assert status != 200 and record["id"] not in body, (status, body[:300])
    page.context.close()
