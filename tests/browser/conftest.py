"""Browser tests: Playwright drives Debian's chromium through JupyterLab, formgrader and the
feedback pages, as a student and an instructor would.

One browser and two JupyterLab servers serve the whole run: the student's (the student
configuration, released notebooks in a home folder) and the instructor's (the graded sample
class's course copy). Pages get no network beyond 127.0.0.1. Screenshots are written to
/tmp/attention-course-screenshots/ (or $ATTENTION_COURSE_SCREENSHOTS). Under CI (CI=true) a
browser that cannot be started fails the tests; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest

from attention_course.cli.samples import sample_notebooks
from attention_course.integrations.student_config import write_student_config
from attention_course.quiz.loading import load_bank
from attention_course.quiz.notebooks import selfcheck_notebook
from attention_course.quiz.selfcheck import build_selfcheck
from tests.browser.lab import NO_NEWS, LabServer, start_lab
from tests.course import BANK_DIR, COURSE_ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
# Outside the repository: no test writes into it.
DEFAULT_SCREENSHOTS = Path(tempfile.gettempdir()) / "attention-course-screenshots"
SCREENSHOTS = Path(os.environ.get("ATTENTION_COURSE_SCREENSHOTS") or DEFAULT_SCREENSHOTS)
ASSIGNMENT = "attention_basics"
STUDENT_ID = "alice"  # the quiz widgets' student
QUIZZES = ("knowledge_check", "concept_check")
NUMBERS_QUIZ = "misconceptions"  # a self-check whose questions hold numbers of each student's own
COURSE_ID = "attention-course"


def pytest_collection_modifyitems(items) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)


def _cannot_run(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests cannot run under CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _cannot_run("Playwright is not installed (pip install -e '.[dev]')")
    if not os.access(CHROMIUM, os.X_OK):
        _cannot_run(f"{CHROMIUM} is missing (apt-get install chromium; scripts/setup.sh does)")
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
    except Exception as exc:  # noqa: BLE001 - any failure to start is reported the same way
        playwright.stop()
        _cannot_run(f"{CHROMIUM} did not start: {exc}")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if SCREENSHOTS == DEFAULT_SCREENSHOTS:  # this run's pictures only (never a folder of yours)
        for old in SCREENSHOTS.glob("*.png"):
            old.unlink()
    yield browser
    browser.close()
    playwright.stop()


def _local_only(route) -> None:
    """No network: only the test servers on 127.0.0.1 and local files are reached."""
    url = urlparse(route.request.url)
    if url.scheme in ("file", "data", "blob") or url.hostname == "127.0.0.1":
        route.continue_()
    else:
        route.abort("internetdisconnected")


def new_page(browser, lab: LabServer | None = None):
    """A page in a fresh context (no shared cookies or storage), cut off from the network,
    logged in to `lab` if given. Every request it makes is recorded in `page.requests`."""
    context = browser.new_context(
        viewport=VIEWPORT, extra_http_headers=lab.headers() if lab else None
    )
    context.set_default_timeout(30_000)
    context.route("**/*", _local_only)
    page = context.new_page()
    page.requests = []
    page.on("request", lambda request: page.requests.append(request.url))
    return page


def screenshot(page, name: str, full_page: bool = False) -> Path:
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


@pytest.fixture
def page_factory(browser):
    pages = []

    def make(lab: LabServer | None = None):
        page = new_page(browser, lab)
        pages.append(page)
        return page

    yield make
    for page in pages:
        page.context.close()


# --- the student's JupyterLab ---------------------------------------------------------------


@pytest.fixture(scope="package")
def student_home(tmp_path_factory) -> Path:
    """A student's folder: the released notebook untouched, completed (the instructor's
    solutions) and partly done (classic mistakes), and the quizzes' self-check notebooks (as
    `attention-course quiz export QUIZ --format widgets` writes them)."""
    home = tmp_path_factory.mktemp("student-home")
    samples = sample_notebooks(ASSIGNMENT, COURSE_ROOT)
    for folder, student in (
        ("untouched", "demo-stub"),
        ("completed", "demo-instructor"),
        ("partial", "demo-partial"),
    ):
        (home / folder).mkdir()
        nbformat.write(samples[student], home / folder / f"{ASSIGNMENT}.ipynb")
    (home / "quiz").mkdir()
    for quiz in (*QUIZZES, NUMBERS_QUIZ):
        nb = selfcheck_notebook(build_selfcheck(load_bank(quiz, BANK_DIR)))
        nbformat.write(nb, home / "quiz" / f"{quiz}.selfcheck.ipynb")
    return home


@pytest.fixture(scope="package")
def student_exchange(tmp_path_factory) -> Path:
    """The course's nbgrader exchange, as the students' configuration names it."""
    return tmp_path_factory.mktemp("exchange")


@pytest.fixture(scope="package")
def student_lab(browser, student_home, student_exchange, tmp_path_factory) -> Iterator[LabServer]:
    """JupyterLab in the student configuration (`attention-course student-config`), on
    JUPYTER_CONFIG_PATH as the README tells students; no lab settings of the tests' own but
    every cell in the DOM (no news settings: the configuration must keep the news away)."""
    state = tmp_path_factory.mktemp("student-lab")
    config = state / "jupyter-config"
    write_student_config(config, COURSE_ID, str(student_exchange))
    lab = start_lab(student_home, state, config)
    yield lab
    lab.stop()


# --- the instructor's JupyterLab -------------------------------------------------------------


@pytest.fixture(scope="package")
def instructor_lab(browser, graded_class, tmp_path_factory) -> Iterator[LabServer]:
    """JupyterLab with every nbgrader extension, in the graded sample class's course copy."""
    root, _ = graded_class
    lab = start_lab(root, tmp_path_factory.mktemp("instructor-lab"), lab_settings=NO_NEWS)
    yield lab
    lab.stop()
