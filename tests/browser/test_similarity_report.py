"""The similarity report in Chromium, offline: per pair of students, each function's two cells
side by side with the matching lines highlighted; at 320 px the cells stack and every line of
text is whole; the highlights stay visible in forced colours; axe-core finds no serious or
critical violation, wide or narrow."""

from __future__ import annotations

import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.similarity.compare import compare_class
from attention_course.similarity.report import write_report
from tests.browser.axe import violations
from tests.browser.conftest import screenshot
from tests.browser.page_checks import LINES
from tests.course import COURSE_ROOT
from tests.similarity import realistic
from tests.similarity.realistic import ASSIGNMENT

# Copies of several kinds, the ring, the course-text students, and students of their own.
STUDENTS = ["lena", "sami", "victor", "xavier", "omar", "tobi", "sven", "jonas", "kemal"]
STUDENTS += ["leila", "tomas", "ugne", "amara", "bilal", "chen", "kofi", "milan", "priya"]

SIDES = """() => [...document.querySelectorAll('.sides')].map(sides => {
  const boxes = [...sides.querySelectorAll('.side')].map(side => {
    const box = side.getBoundingClientRect();
    return {x: box.x, y: box.y, width: box.width, height: box.height,
            marked: side.querySelectorAll('.ln.match').length};
  });
  return {title: sides.previousElementSibling.innerText, boxes};
})"""

# The look of a matching line of rare code, one of common code and a plain line.
LOOKS = """() => {
  const look = (selector) => {
    const el = document.querySelector(selector);
    if (!el) return null;
    const s = getComputedStyle(el);
    return {background: s.backgroundColor, color: s.color, border: s.borderLeftStyle,
            borderWidth: s.borderLeftWidth, tag: el.querySelector('.tag').innerText};
  };
  return {rare: look('.ln.match:not(.common)'), common: look('.ln.match.common'),
          plain: look('.ln:not(.match):not(.known)')};
}"""


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("similar-browser") / "course", COURSE_ROOT)
    realistic.write_class(root, STUDENTS)
    written = write_report(compare_class(ASSIGNMENT, root), root / "reports" / ASSIGNMENT)
    return next(p for p in written if p.suffix == ".html")


def opened(page_factory, report_page, width: int):
    page = page_factory()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(report_page.as_uri())
    page.wait_for_load_state("load")
    assert [u for u in page.requests if not u.startswith("file:")] == []
    return page


def test_each_pair_shows_its_functions_side_by_side_with_the_matches_highlighted(
    report_page, page_factory
):
    page = opened(page_factory, report_page, 1280)
    blocks = page.evaluate(SIDES)
    titles = [b["title"] for b in blocks]
    assert len(blocks) >= 6, titles
    for block in blocks:
        left, right = block["boxes"]
        assert left["width"] > 400 and right["width"] > 400, block
        assert abs(left["y"] - right["y"]) < 1 and left["x"] + left["width"] <= right["x"], block
        assert left["marked"] > 0 and right["marked"] > 0, block
    looks = page.evaluate(LOOKS)
    assert looks["rare"]["background"] != looks["plain"]["background"]
    assert looks["common"]["background"] != looks["rare"]["background"]
    assert looks["rare"]["tag"].endswith("\u00d7") and looks["plain"]["tag"] == ""
    # the pairs come first: the table of pairs is above the first pair's cells
    table = page.locator("#pairs + div table").bounding_box()
    first = page.locator(".pair").first.bounding_box()
    assert table is not None and first is not None and table["y"] < first["y"]
    screenshot(page, "similarity-top")
    page.locator("#pair-1").scroll_into_view_if_needed()
    screenshot(page, "similarity-pair")


def test_at_320_px_the_cells_stack_and_every_line_of_text_is_whole(report_page, page_factory):
    page = opened(page_factory, report_page, 320)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 320, f"the page scrolls sideways: {width} px wide"
    for block in page.evaluate(SIDES):
        top, bottom = block["boxes"]
        assert bottom["y"] >= top["y"] + top["height"] - 1, block  # one below the other
        assert top["x"] >= 0 and top["x"] + top["width"] <= 320, block
    text = page.evaluate(LINES, "h1, h2, h3, h4, h5, p, li, th, td")
    assert text["lines"] > 50 and text["cut"] == [], text["cut"][:5]
    # the code keeps its lines: it scrolls inside its box, which the keyboard can reach
    assert page.evaluate("[...document.querySelectorAll('pre')].every(p => p.tabIndex === 0)")
    screenshot(page, "similarity-320-top")
    page.locator("#pair-1 .sides").first.scroll_into_view_if_needed()
    screenshot(page, "similarity-320-pair")


def test_the_highlights_stay_visible_in_forced_colours(report_page, page_factory):
    page = opened(page_factory, report_page, 1280)
    page.emulate_media(forced_colors="active")
    assert page.evaluate("matchMedia('(forced-colors: active)').matches")
    looks = page.evaluate(LOOKS)
    # a rare match keeps a fill of the system's highlight colours; a common one a border
    assert looks["rare"]["background"] != looks["plain"]["background"], looks
    assert looks["rare"]["color"] != looks["plain"]["color"], looks
    assert (
        looks["common"]["border"] in ("dashed", "solid") and looks["common"]["borderWidth"] != "0px"
    )
    assert looks["plain"]["border"] == "none" or looks["plain"]["borderWidth"] == "0px", looks
    page.locator("#pair-1").scroll_into_view_if_needed()
    screenshot(page, "similarity-forced-colours")


@pytest.mark.parametrize("width", [1280, 320])
def test_axe_core_finds_no_serious_or_critical_violation(report_page, page_factory, width):
    page = opened(page_factory, report_page, width)
    assert violations(page) == []
