"""The class report's files, about a hostile student: nothing the student wrote is live in them.

Mallory's functions raise exceptions whose messages carry Markdown images and links, HTML and
spreadsheet formulas. The class is autograded by nbgrader (feedback included) and reported;
report.md, rendered by a Markdown library (tables, bare URLs as links), holds no link and no
image but the report's own figure, and shows the messages as the text they were; no CSV cell
can be read as a formula; the HTML feedback shows the same text, not markup.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import mistune
import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import copy_course, release
from attention_course.classgrade.run import autograde_class
from attention_course.cli.samples import fill
from attention_course.reports.class_report import ClassReport, GroupStats, ItemStats, class_report
from attention_course.reports.files import to_markdown, write_csvs, write_report
from attention_course.sandbox import confined
from tests.course import COURSE_ROOT
from tests.html_page import Page

ASSIGNMENT = "attention_basics"
STUDENT = "mallory"
IMAGE = "![tracker](http://evil.example/t.png)"
LINK = "[Click for your regrade](http://evil.example/regrade)"
HTML = "<img src=x onerror=alert(1)><a href='http://evil.example/a'>here</a>"
FORMULA = '=HYPERLINK("http://evil.example/f","x")'
PAYLOADS = {
    "softmax": f"{IMAGE} {LINK} | www.evil.example/w",
    "causal_mask": f"{FORMULA} {HTML} `tick` $\\href{{http://evil.example/m}}{{x}}$",
}
SOURCES = {
    "softmax": f"def softmax(z, axis=-1):\n    raise ValueError({PAYLOADS['softmax']!r})\n",
    "causal_mask": (
        f"def causal_mask(seq_len):\n    raise RuntimeError({PAYLOADS['causal_mask']!r})\n"
    ),
}
# What a spreadsheet may read as a formula (OWASP, CSV injection), written here on its own.
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# The report's own markup: headings, tables, line breaks in cells, emphasis, lists, its figure.
OWN_TAGS = {"h1", "h2", "p", "table", "thead", "tbody", "tr", "th", "td", "br", "em", "ul", "li"}
OWN_TAGS |= {"img", "pre", "code"}

RENDER = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"])


def assert_inert_markdown(markdown: str) -> Page:
    """report.md rendered: only the report's own tags, its figure the one image, no link."""
    page = Page(RENDER(markdown))
    assert {t for t, _ in page.tags} <= OWN_TAGS, {t for t, _ in page.tags} - OWN_TAGS
    assert [a["src"] for t, a in page.tags if t == "img"] == ["report.png"]
    assert not [a for t, a in page.tags if t == "a"]
    assert "evil.example" not in str(page.tags)
    return page


def assert_no_formula(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    for row in rows:
        for cell in row:
            if cell.startswith(TRIGGERS):
                float(cell)  # only a number may start so (a negative one)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert all(line.startswith('"') for line in lines)  # every cell quoted (OWASP)
    return rows


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    if not confined.probe().ok:
        pytest.fail(f"no sandbox on this machine: {confined.probe().detail}")
    base = tmp_path_factory.mktemp("hostile-report")
    course = copy_course(base / "course", COURSE_ROOT)
    release(root=course, assignments=[ASSIGNMENT])
    nb = fill(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", SOURCES)
    folder = course / "submitted" / STUDENT / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
    run = autograde_class(ASSIGNMENT, course, jobs=1)
    assert run.outcomes[STUDENT].status == "graded", run.outcomes[STUDENT]
    out = base / "report"
    write_report(class_report(ASSIGNMENT, course), out)
    return course, out


def test_report_md_renders_no_link_or_image_of_the_student(hostile_class):
    _, out = hostile_class
    page = assert_inert_markdown((out / "report.md").read_text(encoding="utf-8"))
    for payload in PAYLOADS.values():  # the messages arrived, shown as the text they were
        assert payload in page.text


def test_csv_cells_are_never_formulas(hostile_class):
    _, out = hostile_class
    rows = assert_no_formula(out / "pass_rates.csv")
    assert_no_formula(out / "scores.csv")
    failures = [r[-2] for r in rows[1:]]
    assert any(PAYLOADS["causal_mask"] in f for f in failures)  # the text is there, inert


def test_html_feedback_shows_the_text_not_markup(hostile_class):
    course, _ = hostile_class
    path = course / "feedback" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html"
    page = Page(path.read_text(encoding="utf-8"))
    assert "evil.example" not in str(page.tags)  # no tag of the student's: no img, a, href
    assert HTML in page.text and IMAGE in page.text


def test_what_lands_in_the_report_as_text_is_escaped_wherever_it_lands(tmp_path):
    """Student ids (folder names) and failure messages starting as formulas, in every place
    of report.md and the CSV files, including a quiz's item analysis quoting wrong answers."""
    hostile_id = f"{LINK}{IMAGE}"
    item = ItemStats("softmax", "test_rows", "rows sum to 1", 2.0, graded=2, passed=0)
    item.hints = Counter({FORMULA: 1, f"@SUM(A1) {HTML}": 1, "-1+cmd": 1, "+x | y": 1})
    report = ClassReport(
        ASSIGNMENT,
        "function",
        "grader test",
        2.0,
        {hostile_id: 0.0, "bob": 0.0},
        [GroupStats("softmax", 2.0, [0.0, 0.0])],
        [item],
        [f"{hostile_id}: no recorded tests for softmax (autograde again)"],
        [hostile_id],
        item_analysis=f"q1: 0/2 correct\n    wrong ```\n{LINK}\n``` x2",
    )
    markdown = to_markdown(report)
    page = assert_inert_markdown(markdown)
    assert page.text.count(hostile_id) == 2  # in the notes and among those not autograded
    assert FORMULA in page.text and HTML in page.text
    assert LINK in page.text.split("Item analysis")[1]  # inside its fence, still plain text
    write_csvs(report, tmp_path)
    rows = assert_no_formula(tmp_path / "pass_rates.csv")
    assert rows[1][-2] == "'" + FORMULA  # the text kept, after an apostrophe
