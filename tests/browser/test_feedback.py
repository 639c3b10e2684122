"""The feedback HTML a student receives, opened with no network: formulas typeset, every PASS/FAIL
line and hint whole; readable by everybody (axe-core at 1280 and 320 px, no sideways scrolling,
the summary naming each test's function, no stray score output, wrapped hints indented)."""

from __future__ import annotations

import pytest

from tests.browser.axe import violations
from tests.browser.conftest import screenshot
from tests.browser.page_checks import LINES, MATH, raw_latex
from tests.course import ASSIGNMENTS

# The page axe-core checks in the default run (it takes seconds a page): the partly wrong
# student's, with passes, failures, hints and formulas; every page under --long.
AXE_STUDENT = "demo-partial"
SIDEWAYS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
# Each indented line of the graders' output that wraps: its later rows start no further left
# than its first (a hint stays under its PASS/FAIL line at any width).
HANGING = r"""() => {
  const outdented = [];
  let wrapped = 0;
  for (const line of document.querySelectorAll('div.output_area pre .ac-hang')) {
    if (!/^[1-9]/.test(line.style.getPropertyValue('--indent'))) continue;
    const range = document.createRange();
    range.selectNodeContents(line);
    const boxes = [...range.getClientRects()].filter(r => r.width > 0);
    const tops = new Set(boxes.map(r => Math.round(r.top)));
    if (tops.size < 2) continue;
    wrapped += 1;
    const first = Math.min(...boxes.filter(r => Math.round(r.top) === Math.min(...tops))
      .map(r => r.left));
    if (boxes.some(r => r.left < first - 0.5)) outdented.push(line.textContent.slice(0, 80));
  }
  return {outdented, wrapped};
}"""


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_feedback_typesets_formulas_offline_and_shows_whole_hints(
    assignment, graded_class, page_factory
):
    root, results = graded_class
    graded = sorted(s for s, o in results[assignment].outcomes.items() if o.status == "graded")
    files = {s: root / "feedback" / s / assignment / f"{assignment}.html" for s in graded}
    assert graded and all(f.exists() for f in files.values()), files
    wrapped = hung = 0
    for student, path in files.items():
        page = page_factory()
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        outside = [u for u in page.requests if not u.startswith(("file:", "data:"))]
        assert outside == [], f"{student}: the page asks the network for {outside}"

        math = page.evaluate(MATH, "#notebook")
        assert math["count"] > 0 and math["empty"] == [], (student, math)
        assert all(math["fractions"]) and all(math["superscripts"]) and all(math["roots"]), math
        prose = page.locator(".text_cell_render").all_inner_texts()
        assert raw_latex(prose) == [], f"{student}: formulas left as LaTeX"

        lines = page.evaluate(LINES, "div.output_area pre")
        assert lines["cut"] == [], f"{student}: lines cut off at the right edge"
        wrapped += lines["wrapped"]
        assert page.locator("html").get_attribute("lang") == "en"
        summary = page.locator("#toc li a").all_inner_texts()
        tests = [t for t in summary if t.startswith("Tests of ")]
        assert tests and all(t.startswith(("Tests of ", "Comment on ")) for t in summary), summary
        # the score nbgrader reads from a test cell is in its heading, not echoed as Out[n]
        assert page.locator('[id^="cell-id="][id$="_tests"] .output_prompt').count() == 0
        for width in (1280, 320):
            page.set_viewport_size({"width": width, "height": 900})
            if student == AXE_STUDENT:  # axe takes seconds a page: every page under --long
                found = violations(page)
                assert found == [], (student, width, [(v["id"], v["nodes"]) for v in found])
            sideways = page.evaluate(SIDEWAYS)
            assert sideways <= 0, f"{student}: the page scrolls {sideways} px sideways at {width}"
            assert page.evaluate(LINES, "div.output_area pre")["cut"] == [], (student, width)
        indent = page.evaluate(HANGING)
        assert indent["outdented"] == [], (student, indent)
        hung += indent["wrapped"]
        if student == "demo-partial":
            page.locator("div.output_area pre", has_text="FAIL [").last.scroll_into_view_if_needed()
            screenshot(page, f"feedback-hints-{student}-{assignment}-320")
            page.set_viewport_size({"width": 1280, "height": 900})
            page.locator("math[display=block]").first.scroll_into_view_if_needed()
            screenshot(page, f"feedback-formulas-{student}-{assignment}")
            page.locator("div.output_area pre", has_text="FAIL [").last.scroll_into_view_if_needed()
            screenshot(page, f"feedback-hints-{student}-{assignment}")
    assert wrapped > 0, "no long line to wrap: the check saw nothing it could fail on"
    assert hung > 0, "no indented grader line wrapped at 320 px: the indent check saw nothing"


def test_feedback_in_jupyterlabs_html_viewer_typesets_formulas_without_scripts(
    instructor_lab, graded_class, page_factory
):
    """Where a student opens fetched feedback: JupyterLab's HTML viewer, which runs no scripts
    until the file is trusted."""
    assignment = "attention_basics"
    path = f"feedback/demo-partial/{assignment}/{assignment}.html"
    assert (graded_class[0] / path).exists()
    page = page_factory(instructor_lab)
    page.goto(instructor_lab.url(f"/lab/workspaces/feedback/tree/{path}?reset"))
    viewer = page.locator(".jp-HTMLViewer iframe")
    viewer.wait_for(timeout=60_000)
    assert "allow-scripts" not in (viewer.get_attribute("sandbox") or "")
    frame = viewer.element_handle().content_frame()
    frame.wait_for_selector("math")
    math = frame.evaluate(MATH, "#notebook")
    assert math["count"] > 0 and math["empty"] == [], math
    assert all(math["fractions"]) and all(math["superscripts"]) and all(math["roots"]), math
    assert raw_latex(frame.locator(".text_cell_render").all_inner_texts()) == []
    assert frame.evaluate(LINES, "div.output_area pre")["cut"] == []
    frame.locator("math[display=block]").first.scroll_into_view_if_needed()
    screenshot(page, "feedback-in-jupyterlab")


@pytest.mark.long
@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_every_feedback_page_passes_axe_at_1280_and_320(assignment, graded_class, page_factory):
    root, results = graded_class
    graded = sorted(s for s, o in results[assignment].outcomes.items() if o.status == "graded")
    assert graded
    for student in graded:
        page = page_factory()
        page.goto((root / "feedback" / student / assignment / f"{assignment}.html").as_uri())
        page.wait_for_load_state("load")
        for width in (1280, 320):
            page.set_viewport_size({"width": width, "height": 900})
            found = violations(page)
            assert found == [], (student, width, [(v["id"], v["nodes"]) for v in found])
            screenshot(page, f"feedback-axe-{student}-{assignment}-{width}")
