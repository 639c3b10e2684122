"""The student's JupyterLab: run the released notebook, read its visible checks, see its figures,
press Validate and read every line of its answer whole; fetch and submit in the Assignments tab
and read when; no news question and no instructor tools in the student configuration."""

from __future__ import annotations

import ast
import re
import textwrap

import nbformat
import pytest

from tests.browser.axe import violations
from tests.browser.conftest import ASSIGNMENT, COURSE_ID, screenshot
from tests.browser.lab import ERROR_OUTPUT, cells, close_dialog, open_notebook, run_all, validate
from tests.browser.page_checks import DIALOG_FIT, LINES
from tests.course import COURSE_ROOT

SUCCESS = "Success! Your notebook passes all the tests."
# axe-core's serious and critical findings in JupyterLab and nbgrader themselves, around the
# dialog (upstream, not made by the project), measured in this JupyterLab: `aria-allowed-attr`
# (JupyterLab's jp-button toolbar items, nbgrader's Validate button), `aria-input-field-name`
# (CodeMirror's cell editors), `aria-required-children` (the notebook's windowed list),
# `button-name` (the headings' collapse buttons), `scrollable-region-focusable` (markdown
# cells at 320 px). The dialog itself is checked with none of them allowed.
KNOWN_IN_JUPYTERLAB = frozenset(
    {
        "aria-allowed-attr",
        "aria-input-field-name",
        "aria-required-children",
        "button-name",
        "scrollable-region-focusable",
    }
)


def _notebook(home, folder: str) -> nbformat.NotebookNode:
    return nbformat.read(home / folder / f"{ASSIGNMENT}.ipynb", as_version=4)


def _grade_cells(nb) -> list[int]:
    return [i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade")]


def _cells_with_errors(page) -> list[int]:
    found = cells(page)
    return [i for i in range(found.count()) if found.nth(i).locator(ERROR_OUTPUT).count()]


def test_untouched_notebook_stops_at_its_first_visible_check(
    student_lab, student_home, page_factory
):
    nb = _notebook(student_home, "untouched")
    first_check = _grade_cells(nb)[0]
    page = page_factory(student_lab)
    open_notebook(page, student_lab, f"untouched/{ASSIGNMENT}.ipynb")
    assert cells(page).count() == len(nb.cells)
    run_all(page, until="error")

    assert _cells_with_errors(page) == [first_check], "only the first visible check may fail"
    failed = cells(page).nth(first_check)
    assert "NotImplementedError" in failed.locator(ERROR_OUTPUT).inner_text()
    failed.locator(ERROR_OUTPUT).scroll_into_view_if_needed()
    screenshot(page, "student-untouched-run-all")


def test_completed_notebook_passes_its_checks_and_draws_its_figures(
    student_lab, student_home, page_factory
):
    nb = _notebook(student_home, "completed")
    page = page_factory(student_lab)
    open_notebook(page, student_lab, f"completed/{ASSIGNMENT}.ipynb")
    run_all(page, until="all")

    assert _cells_with_errors(page) == [], "a completed notebook runs without errors or warnings"
    for i in _grade_cells(nb):
        text = "\n".join(cells(page).nth(i).locator(".jp-OutputArea-output").all_inner_texts())
        assert text.strip(), f"visible check cell {nb.cells[i].get('id')} shows no result"
    plots = [i for i, c in enumerate(nb.cells) if "plt.show()" in c.source]
    assert plots, "the notebook draws figures"
    for i in plots:
        image = cells(page).nth(i).locator(".jp-RenderedImage img").first
        image.scroll_into_view_if_needed()
        size = image.evaluate("img => [img.naturalWidth, img.getBoundingClientRect().width]")
        assert min(size) > 100, f"figure of cell {nb.cells[i].get('id')} not drawn: {size}"
    cells(page).nth(plots[-1]).locator(".jp-RenderedImage img").first.scroll_into_view_if_needed()
    screenshot(page, "student-completed-figure")


def _dialog_entries(page) -> list[tuple[str, str]]:
    """(where, error) per failed cell of the open Validate dialog."""
    blocks = page.locator(".jp-Dialog #validation-message pre").all_inner_texts()
    return list(zip(blocks[0::2], blocks[1::2], strict=True))


# Scrolls the dialog to its block with the longest line (for the screenshot).
SHOW_LONGEST = """() => {
  const longest = e => Math.max(...e.innerText.split('\\n').map(line => line.length));
  const blocks = [...document.querySelectorAll('.jp-Dialog #validation-message pre')];
  blocks.sort((a, b) => longest(b) - longest(a))[0].scrollIntoView({block: 'center'});
}"""


def _validate_lines(page, width: int) -> dict:
    """At a window `width` px wide: the open Validate dialog's fit and its lines (page_checks)."""
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_function("w => document.documentElement.clientWidth === w", arg=width)
    return {
        **page.evaluate(DIALOG_FIT, ".jp-Dialog #validation-message pre"),
        **page.evaluate(LINES, ".jp-Dialog #validation-message pre"),
    }


def test_validate_shows_the_failing_check_and_its_hint_first(
    student_lab, student_home, page_factory
):
    nb = _notebook(student_home, "partial")
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    page = page_factory(student_lab)
    page.set_viewport_size({"width": 1400, "height": 900})
    open_notebook(page, student_lab, f"partial/{ASSIGNMENT}.ipynb")
    text = validate(page)
    for width in (1400, 900):  # a laptop's window, and half of a wide screen
        fit = _validate_lines(page, width)
        page.evaluate(SHOW_LONGEST)
        screenshot(page, f"student-validate-partial-{width}")
        assert fit["wider"] == [] and fit["cut"] == [] and not fit["outside"], (width, fit)
        assert fit["blocks"] >= 2 and fit["wrapped"] >= 1, fit  # long lines, wrapped whole
    entries = _dialog_entries(page)
    assert entries, text
    hints = 0
    for where, error in entries:
        assert "Traceback" not in text and "---->" not in text, text
        head, statement = where.split("\n", 1)
        cell_id, line = head.rstrip(":").split(", line ")
        source = by_id[cell_id].source.splitlines()
        check = textwrap.dedent(statement.split("\nraised in ")[0])
        # the statement shown is the one at that line of the cell, not the whole cell
        assert check.splitlines()[0] in source[int(line) - 1], (check, source[int(line) - 1])
        assert len(where.splitlines()) <= 10 and len(error.splitlines()) <= 4, (where, error)
        first_line = error.splitlines()[0]
        node = ast.parse(check).body[0] if check.startswith("assert") else None
        if isinstance(node, ast.Assert) and isinstance(node.msg, ast.Constant):
            assert first_line == f"AssertionError: {node.msg.value}"
            hints += 1
        else:
            assert ": " in first_line or first_line.isidentifier(), first_line
    assert hints, "the partly wrong notebook fails an assertion with a hint"
    close_dialog(page)


# 1280 x 900 at 400% zoom: the CSS pixels a zoomed-in student's window has.
ZOOMED = {"width": 320, "height": 225}
# Where the focus is, what names the dialog, and how its message region sits in the window.
DIALOG_STATE = """() => {
  const content = document.querySelector('.jp-Dialog .jp-Dialog-content');
  const body = content.querySelector('.jp-Dialog-body');
  const title = document.getElementById(content.getAttribute('aria-labelledby') || '');
  const r = body.getBoundingClientRect();
  return {
    focused: body.contains(document.activeElement),
    role: content.getAttribute('role'),
    name: title ? title.textContent.trim() : content.getAttribute('aria-label'),
    regionName: body.getAttribute('aria-label'),
    height: r.height, window: window.innerHeight,
    top: body.scrollTop, bottom: body.scrollTop + body.clientHeight >= body.scrollHeight - 1,
  };
}"""
# Which of the dialog's blocks show their first and their last line in the region now.
SEEN = """() => {
  const body = document.querySelector('.jp-Dialog .jp-Dialog-body');
  const box = body.getBoundingClientRect();
  return [...body.querySelectorAll('#validation-message pre')].map(pre => {
    const r = pre.getBoundingClientRect();
    const top = r.top >= box.top - 1 && r.top < box.bottom;
    return [top, r.bottom <= box.bottom + 1 && r.bottom > box.top];
  });
}"""


def _read_by_keyboard(page, name: str) -> dict:
    """Read the open dialog's message zoomed to 400% with the keyboard alone (PageDown and
    the arrows, Space once): the blocks whose first and last lines were each seen."""
    page.set_viewport_size(ZOOMED)
    page.wait_for_function("w => document.documentElement.clientWidth === w", arg=320)
    state = page.evaluate(DIALOG_STATE)
    blocks = page.evaluate(SEEN)
    first, last = [f for f, _ in blocks], [b for _, b in blocks]
    screenshot(page, f"{name}-400-percent")
    keys = ["Space", "ArrowDown"] + ["PageDown"] * 40
    for key in keys:
        if page.evaluate(DIALOG_STATE)["bottom"]:
            break
        page.keyboard.press(key)
        top = None
        while top != (top := page.evaluate(DIALOG_STATE)["top"]):  # smooth scrolling: settled
            page.wait_for_timeout(60)
        seen = page.evaluate(SEEN)
        first = [a or f for a, (f, _) in zip(first, seen, strict=True)]
        last = [a or b for a, (_, b) in zip(last, seen, strict=True)]
    screenshot(page, f"{name}-400-percent-end")
    return {**state, "end": page.evaluate(DIALOG_STATE), "first": first, "last": last}


@pytest.mark.parametrize("folder", ["untouched", "completed"])
def test_validate_untouched_and_completed(folder, student_lab, student_home, page_factory):
    nb = _notebook(student_home, folder)
    page = page_factory(student_lab)
    open_notebook(page, student_lab, f"{folder}/{ASSIGNMENT}.ipynb")
    text = validate(page)
    screenshot(page, f"student-validate-{folder}")
    if folder == "completed":
        assert SUCCESS in text
        return
    entries = _dialog_entries(page)
    assert len(entries) == len(_grade_cells(nb)) == 4, text
    for where, error in entries:
        assert error.startswith("NotImplementedError: ") and "is not written yet" in error
        assert "raised in " in where and "raise NotImplementedError()" in where
    for known, context in ((KNOWN_IN_JUPYTERLAB, None), (frozenset(), ".jp-Dialog")):
        found = violations(page, known, context)
        assert found == [], (context, [(v["id"], v["nodes"]) for v in found])
    # four failures read without a mouse at 400% zoom: the message region has the focus, is
    # named, takes most of the window, and PageDown brings every block's lines into view
    read = _read_by_keyboard(page, "student-validate-untouched")
    assert read["focused"] and read["role"] == "dialog", read
    assert read["name"] == "Validation Results" and read["regionName"], read
    assert read["height"] >= 0.5 * read["window"], read
    assert page.locator(".jp-Dialog").count() == 1, "Space closed the dialog"
    assert read["end"]["bottom"] and read["end"]["focused"], read
    assert all(read["first"]) and all(read["last"]), read
    for known, context in ((KNOWN_IN_JUPYTERLAB, None), (frozenset(), ".jp-Dialog")):
        found = violations(page, known, context)
        assert found == [], (context, [(v["id"], v["nodes"]) for v in found])


def test_no_check_button_where_the_server_has_no_grading_service(student_lab, page_factory):
    """The course's extension is loaded, but a students' JupyterLab outside the course's hub
    (no grading service to send to) shows no "Check with the course's graders": its server
    says why."""
    page = page_factory(student_lab)
    open_notebook(page, student_lab, f"completed/{ASSIGNMENT}.ipynb")
    loaded = page.evaluate("() => Object.keys(window._JUPYTERLAB || {})")
    assert "@attention-course/check" in loaded, loaded
    toolbar = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-NotebookPanel-toolbar")
    toolbar.get_by_role("button", name="Validate").wait_for()
    assert toolbar.get_by_role("button", name="Check with graders").count() == 0
    answer = page.request.get(student_lab.url("/attention-course/hub-check")).json()
    assert answer["available"] is False and "no grading service" in answer["reason"], answer


def _nbgrader_menu(page) -> list[str]:
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
    menu = page.locator(".lm-Menu").last
    menu.wait_for()
    items = [t.strip() for t in menu.locator(".lm-Menu-itemLabel").all_inner_texts()]
    return [t for t in items if t]


@pytest.mark.parametrize("role", ["student", "instructor"])
def test_instructor_tools_only_in_the_instructors_jupyterlab(role, request, page_factory):
    lab = request.getfixturevalue(f"{role}_lab")
    page = page_factory(lab)
    page.goto(lab.url("/lab/workspaces/tools?reset"))
    page.wait_for_selector("#jp-main-statusbar", timeout=60_000)
    items = [item.lower() for item in _nbgrader_menu(page)]
    screenshot(page, f"{role}-nbgrader-menu")
    sidebar = page.locator(".jp-SideBar.jp-mod-right .lm-TabBar-tab").all_inner_texts()
    formgrader = page.request.get(lab.url("/formgrader")).status
    if role == "student":
        assert items == ["assignment list"]
        assert "Create Assignment" not in sidebar
        assert formgrader == 404
    else:
        assert {"assignment list", "formgrader", "create assignment"} <= set(items), items
        assert "Create Assignment" in sidebar, sidebar
        assert formgrader == 200


# JupyterLab's question on a fresh screen, and the requests its announcements make (the
# plugin's own settings, the news and the update check).
NEWS_TEXT = "official Jupyter news"
NEWS_REQUESTS = ("/api/config/apputilsextensionannouncements", "/lab/api/news", "/lab/api/update")


def test_students_get_no_news_question(student_lab, page_factory):
    page = page_factory(student_lab)
    page.goto(student_lab.url("/lab/workspaces/news?reset"))
    page.wait_for_selector("#jp-main-statusbar .jp-Notification-Status", timeout=60_000)
    page.wait_for_timeout(3_000)  # longer than the question takes to appear when it is on
    screenshot(page, "student-no-news")
    assert not page.get_by_text(NEWS_TEXT).count(), "JupyterLab asks students about its news"
    asked = [url for url in page.requests if any(path in url for path in NEWS_REQUESTS)]
    assert asked == [], asked
    page.locator("#jp-main-statusbar .jp-Notification-Status").click()  # the notifications
    center = page.locator(".jp-Notification-Center")
    center.wait_for()
    assert NEWS_TEXT not in center.inner_text()


@pytest.fixture(scope="module")
def released_assignment(student_exchange) -> str:
    """`ASSIGNMENT` released to the course's exchange by the instructor (nbgrader's own release
    from the committed release/ folder)."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeReleaseAssignment
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(COURSE_ROOT)
    config.CourseDirectory.course_id = COURSE_ID
    config.CourseDirectory.assignment_id = ASSIGNMENT
    config.Exchange.root = str(student_exchange)
    coursedir = CourseDirectory(config=config)
    authenticator = Authenticator(config=config)
    ExchangeReleaseAssignment(
        coursedir=coursedir, authenticator=authenticator, config=config
    ).start()
    return ASSIGNMENT


def test_assignments_tab_shows_readable_submission_times(
    released_assignment, student_exchange, student_lab, page_factory
):
    page = page_factory(student_lab)
    page.goto(student_lab.url("/lab/workspaces/assignments?reset"))
    page.wait_for_selector("#jp-main-statusbar", timeout=60_000)
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
    released = page.locator("#released_assignments_list")
    released.get_by_text(released_assignment).wait_for()
    released.get_by_role("button", name="Fetch").click()
    fetched = page.locator("#fetched_assignments_list")
    fetched.get_by_role("button", name="Submit").click()
    submitted = page.locator("#submitted_assignments_list .list_item")
    submitted.first.wait_for()
    shown = submitted.first.inner_text()
    screenshot(page, "student-assignments-submitted")

    inbound = list((student_exchange / COURSE_ID / "inbound").glob(f"*+{released_assignment}+*"))
    assert len(inbound) == 1, inbound
    stamp = (inbound[0] / "timestamp.txt").read_text().strip()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} UTC", stamp), stamp  # nbgrader's
    readable = f"{stamp.split('.')[0]} UTC"  # to the second, with its zone
    assert readable in shown and stamp not in shown and stamp.split()[1] not in shown, shown
