"""The similarity report in Chromium, offline: each reported pair's two cells side by side,
the matching lines highlighted in both."""

from __future__ import annotations

import pytest

from attention_course.similarity.compare import compare_class
from attention_course.similarity.report import write_report
from tests.browser.conftest import screenshot
from tests.similarity.classes import ASSIGNMENT, build_class, copy_course

BOXES = """() => [...document.querySelectorAll('.pair')].map(pair => {
  const sides = [...pair.querySelectorAll('.side')].map(side => {
    const box = side.getBoundingClientRect();
    const pre = side.querySelector('pre');
    return {x: box.x, y: box.y, width: box.width, height: box.height,
            marked: side.querySelectorAll('span.match').length,
            background: getComputedStyle(side.querySelector('span.match') || pre).backgroundColor,
            plain: getComputedStyle(side.querySelector('span:not(.match)') || pre).backgroundColor};
  });
  return {title: pair.querySelector('h3').innerText, sides};
})"""


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("similar-browser") / "course")
    build_class(root)
    written = write_report(compare_class(ASSIGNMENT, root), root / "reports" / ASSIGNMENT)
    return next(p for p in written if p.suffix == ".html")


def test_pairs_are_side_by_side_with_matching_lines_highlighted(report_page, page_factory):
    page = page_factory()
    page.goto(report_page.as_uri())
    page.wait_for_load_state("load")
    assert [u for u in page.requests if not u.startswith("file:")] == []
    pairs = page.evaluate(BOXES)
    assert len(pairs) == 4, [p["title"] for p in pairs]
    for pair in pairs:
        left, right = pair["sides"]
        assert left["width"] > 400 and right["width"] > 400, pair
        assert abs(left["y"] - right["y"]) < 1 and left["x"] + left["width"] <= right["x"], pair
        assert left["marked"] > 0 and right["marked"] > 0, pair
        assert left["background"] != left["plain"], pair  # the highlight is visible
    page.locator(".pair").first.scroll_into_view_if_needed()
    screenshot(page, "similarity-pair")
    page.locator("h2#scaled_dot_product_attention").scroll_into_view_if_needed()
    screenshot(page, "similarity-sdpa")
