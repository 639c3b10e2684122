"""Feedback and formgrader HTML: formulas as MathML, no MathJax script, wrapped grader output
(the browser tests look at the pages; these check what is written)."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbconvert.filters.markdown_mistune import MarkdownWithMath

from attention_course.reports.notebook_html import (
    OUTPUT_CSS,
    CourseHTMLHeader,
    MathMLRenderer,
    UnsupportedFormula,
    latex_to_mathml,
)
from tests.course import COURSE_ROOT

NOTEBOOKS = sorted((COURSE_ROOT / "source").glob("*/*.ipynb"))


def render(markdown: str) -> str:
    return MarkdownWithMath(renderer=MathMLRenderer(escape=False)).render(markdown)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_formula_of_the_notebooks_becomes_mathml(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            html = render(cell.source)
            assert 'class="tex"' not in html, f"{cell.get('id')}: a formula left as LaTeX"
            assert html.count("<math") == html.count("</math>")
            text = re.sub(r"<annotation.*?</annotation>|<[^>]+>", "", html)
            assert "$" not in text, f"{cell.get('id')}: a $ delimiter left"


def test_mathml_keeps_the_latex_as_an_annotation_and_lays_out_fractions():
    mathml = latex_to_mathml(r"\frac{Q K^\top}{\sqrt{d_k}}", display=True)
    assert mathml.startswith('<math display="block"><semantics>')
    assert "<mfrac>" in mathml and "<msqrt>" in mathml
    assert '<annotation encoding="application/x-tex">\\frac{Q K^\\top}{\\sqrt{d_k}}' in mathml
    assert "xmlns" not in mathml


def test_unknown_latex_is_reported_and_shown_as_code():
    with pytest.raises(UnsupportedFormula, match="unknown \\\\nosuchcommand"):
        latex_to_mathml(r"\nosuchcommand{x}")
    assert '<code class="tex">$\\nosuchcommand{x}$</code>' in render(r"a $\nosuchcommand{x}$ b")


def test_a_formula_in_a_heading_stays_unprefixed_mathml():
    html = render(r"## Why $-\infty$ and not a large number?")
    assert "<math" in html and "ns0:" not in html
    assert 'id="Why' in html  # nbconvert's anchor is still added


def test_the_page_css_keeps_syntax_colours_and_wraps_output(tmp_path):
    nb = nbformat.v4.new_notebook()
    _, resources = CourseHTMLHeader().preprocess(nb, {"config_dir": str(tmp_path)})
    css = "\n".join(resources["inlining"]["css"])
    assert ".highlight .k { color: #008000" in css  # nbconvert's classic Pygments colours
    assert OUTPUT_CSS in css and "white-space: pre-wrap" in OUTPUT_CSS


def test_feedback_html_has_mathml_wrapped_output_and_no_script_from_the_network(graded_class):
    root, _ = graded_class
    pages = sorted((root / "feedback").glob("*/*/*.html"))
    assert pages
    for page in pages:
        html = page.read_text()
        if page.parent.name != "attention_quiz":  # the quiz's text has no formula
            assert "<math" in html, page
        assert not re.search(r"<script[^>]+src=[\"']?(https?:)?//", html), page
        assert "cdnjs" not in html and "MathJax.Hub" not in html, page
        assert "white-space: pre-wrap" in html, page
