"""Feedback and formgrader HTML: formulas as MathML, no MathJax script, wrapped grader output
(the browser tests look at the pages; these check what is written)."""

from __future__ import annotations

import copy
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


def _notebook_with(outputs: list) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A page"), nbformat.v4.new_code_cell("x = 1")]
    nb.cells[1].outputs = outputs
    return nb


PNG = (  # one pixel
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5E"
    "rkJggg=="
)


@pytest.mark.parametrize("template", ["classic", "lab"])
@pytest.mark.parametrize("image", [False, True])
def test_feedback_exporter_makes_nbconverts_page(template, image):
    """With or without images, classic or JupyterLab cells: the same document as nbconvert's
    exporter (which re-serializes every page with BeautifulSoup: ours only where that changes
    the document), alt texts and tabindex included."""
    from bs4 import BeautifulSoup
    from nbconvert.exporters import HTMLExporter

    from attention_course.reports.notebook_html import FeedbackExporter

    outputs = [nbformat.v4.new_output("display_data", data={"image/png": PNG})] if image else []
    nb = _notebook_with(outputs)
    ours, _ = FeedbackExporter(template_name=template).from_notebook_node(copy.deepcopy(nb))
    theirs, _ = HTMLExporter(template_name=template).from_notebook_node(copy.deepcopy(nb))
    assert str(BeautifulSoup(ours, features="html.parser")) == theirs
    assert ("No description has been provided" in ours) == image
    assert ('tabindex="0"' in ours) == (template == "lab")


def test_highlighting_is_remembered_per_source_lexer_and_magics():
    from nbconvert.filters.highlight import Highlight2HTML

    from attention_course.reports.notebook_html import _RememberedHighlight

    plain = Highlight2HTML(pygments_lexer="ipython3")
    remembered = _RememberedHighlight(Highlight2HTML(pygments_lexer="ipython3"))
    source = "for f in *.txt; do echo $f; done"
    bash = {"magics_language": "bash"}
    for _ in range(2):  # computed, then remembered
        assert remembered(source) == plain(source)
        assert remembered(source, metadata=bash) == plain(source, metadata=bash)
        assert remembered(source, "c") == plain(source, "c")
    assert plain(source) != plain(source, metadata=bash) != plain(source, "c")
    other = _RememberedHighlight(Highlight2HTML(pygments_lexer="python2"))
    assert other("print 1") == Highlight2HTML(pygments_lexer="python2")("print 1")
