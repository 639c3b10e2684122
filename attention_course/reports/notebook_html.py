"""HTML of graded notebooks (feedback, formgrader): formulas as MathML, grader output wrapped.

nbgrader's feedback and formgrader pages leave formulas as LaTeX for MathJax, loaded from a CDN:
offline, on a locked-down network, or in JupyterLab's HTML viewer (which runs no scripts) they
show as raw LaTeX. Here the markdown filter converts every formula to MathML when the page is
made (latex2mathml), and the browser draws it: no script, no network. A pre-wrapped output style
keeps each PASS/FAIL line and its hint whole instead of running off the right edge.
`nbgrader_config.py` installs both for `HTMLExporter`; `templates/feedback/` overlays nbgrader's
feedback template to drop its MathJax script tag.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

import nbgrader
from jinja2 import BytecodeCache, pass_context
from latex2mathml.converter import convert
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from traitlets import default

TEMPLATES = Path(__file__).resolve().parent / "templates"
NBGRADER_TEMPLATES = str(
    Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates"
)

# A LaTeX command latex2mathml did not know stays in its output as text: "\foo".
_UNKNOWN_COMMAND = re.compile(r">\\[A-Za-z]+<")

OUTPUT_CSS = """
/* attention-course: grader output wraps; no PASS/FAIL line or hint runs off the page. */
div.output_area pre, div.output_subarea pre, div.output_text pre {
  white-space: pre-wrap;
  word-break: normal;
  overflow-wrap: anywhere;
}
/* Formulas are MathML, drawn by the browser. */
math {
  font-family: "STIX Two Math", "Cambria Math", "Latin Modern Math", "TeX Gyre Termes Math", math;
  font-size: 1.08em;
}
math[display="block"] {
  display: block math;
  margin: 0.7em 0;
  overflow-x: auto;
}
"""


class UnsupportedFormula(ValueError):
    """A formula uses LaTeX that latex2mathml cannot convert."""


def latex_to_mathml(tex: str, display: bool = False) -> str:
    """MathML for one formula, with its LaTeX kept as an annotation (copy, screen readers).

    Raises UnsupportedFormula when latex2mathml fails or leaves an unknown command behind.
    """
    try:
        mathml = convert(tex.strip(), display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises many kinds on bad input
        raise UnsupportedFormula(f"cannot convert {tex!r}: {exc}") from None
    unknown = _UNKNOWN_COMMAND.search(mathml)
    if unknown:
        raise UnsupportedFormula(f"cannot convert {tex!r}: unknown {unknown.group(0)[1:-1]}")
    # No xmlns: inside HTML it is not needed, and nbconvert's heading anchors re-serialise
    # markup with ElementTree, which would turn a namespace into "ns0:" prefixes.
    mathml = mathml.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)
    opening, rest = mathml.split(">", 1)
    body = rest[: -len("</math>")]
    annotation = f'<annotation encoding="application/x-tex">{html.escape(tex.strip())}</annotation>'
    return f"{opening}><semantics>{body}{annotation}</semantics></math>"


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, with formulas written as MathML instead of for MathJax.

    A formula latex2mathml cannot convert is left as LaTeX in a <code> element.
    """

    def _math(self, tex: str, display: bool, source: str) -> str:
        try:
            return latex_to_mathml(tex, display)
        except UnsupportedFormula:
            return f'<code class="tex">{self.escape_html(source)}</code>'

    def block_math(self, body: str) -> str:
        # a display formula wider than a narrow window scrolls: by keyboard too
        return self._math(body, True, f"$${body}$$").replace("<math ", '<math tabindex="0" ', 1)

    def inline_math(self, body: str) -> str:
        return self._math(body, False, f"${body}$")

    def latex_environment(self, name: str, body: str) -> str:
        source = f"\\begin{{{name}}}{body}\\end{{{name}}}"
        return self._math(source, True, source)


@pass_context
def markdown2html_mathml(context, source: str) -> str:
    """HTMLExporter's `markdown2html` filter with formulas in MathML (cell attachments are
    kept; heading anchors and image embedding stay at nbconvert's defaults)."""
    attachments = context.get("cell", {}).get("attachments", {})
    path = context.get("resources", {}).get("metadata", {}).get("path", "")
    if attachments:
        return _render(source, attachments, path)
    images = "![" in source or "<img" in source  # only images are looked up under `path`
    return _render_plain(source, path if images else "")


def _render(source: str, attachments: dict, path: str) -> str:
    renderer = MathMLRenderer(escape=False, attachments=attachments, path=path)
    return MarkdownWithMath(renderer=renderer).render(source)


@functools.lru_cache(maxsize=4096)
def _render_plain(source: str, path: str) -> str:
    """A markdown cell without attachments: the same for every student of a class (most
    cells are the instructor's), so a grading job renders each once."""
    return _render(source, {}, path)


class CourseHTMLHeader(CSSHTMLHeaderPreprocessor):
    """nbconvert's inlined CSS (syntax colours) plus the course's: wrapped output, MathML.

    Runs in place of nbconvert's CSSHTMLHeaderPreprocessor, whose later run would drop the
    course's CSS: nbgrader_config.py switches that one off and lists this one in
    `HTMLExporter.preprocessors` (which enables it).
    """

    @default("style")
    def _style_default(self):
        return "default"  # the Pygments colours nbconvert's classic template asks for

    def preprocess(self, nb, resources):
        nb, resources = super().preprocess(nb, resources)
        resources["inlining"]["css"].append(OUTPUT_CSS)
        return nb, resources


class _TemplatesInMemory(BytecodeCache):
    """Compiled Jinja templates kept for the life of the process (keyed by name and source
    checksum by Jinja itself): a grading job makes many feedback pages from the same
    templates, and compiling them was a good share of each page's time."""

    _store: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        if bucket.key in self._store:
            bucket.bytecode_from_string(self._store[bucket.key])

    def dump_bytecode(self, bucket) -> None:
        self._store[bucket.key] = bucket.bytecode_to_string()


_HIGHLIGHTED: dict[tuple, str] = {}  # (lexer, formatter options, language, magics, source) -> HTML
HIGHLIGHT_MOST_CHARS = 8192  # longer cells are highlighted anew each time
HIGHLIGHT_ENTRIES = 2048  # then the remembered ones are forgotten, all at once


class _RememberedHighlight:
    """nbconvert's code highlighting (`Highlight2HTML`, a pure function of the cell's source,
    the lexer and the formatter's options), each short cell's HTML remembered for the life of
    the process: most code cells of a page are the instructor's, the same on every page."""

    def __init__(self, highlight: Highlight2HTML) -> None:
        self._highlight = highlight

    def __call__(self, source: str, language: str | None = None, metadata=None) -> str:
        if not isinstance(source, str) or len(source) > HIGHLIGHT_MOST_CHARS:
            return self._highlight(source, language, metadata)
        magics = metadata.get("magics_language") if isinstance(metadata, dict) else None
        options = repr(sorted(self._highlight.extra_formatter_options.items()))
        key = (self._highlight.pygments_lexer, options, language, repr(magics), source)
        if key not in _HIGHLIGHTED:
            if len(_HIGHLIGHTED) >= HIGHLIGHT_ENTRIES:
                _HIGHLIGHTED.clear()
            _HIGHLIGHTED[key] = self._highlight(source, language, metadata)
        return _HIGHLIGHTED[key]


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter (configured as `HTMLExporter`) whose compiled templates are
    reused from one feedback page to the next (`c.GenerateFeedback.exporter_class`), which
    highlights each code cell once per process, and re-reads a page only where nbconvert's last
    pass changes anything."""

    @default("template_paths")
    def _template_paths(self, prune=True, root_dirs=None):
        """nbconvert's, then nbgrader's templates: where the course's feedback template finds
        nbgrader's, which it extends (as 'feedback/index.html.j2')."""
        return [*super()._template_paths(prune, root_dirs), NBGRADER_TEMPLATES]

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = _TemplatesInMemory()
        return environment

    def from_notebook_node(self, nb, resources=None, **kw):
        """HTMLExporter's, whose last step parses the whole page (BeautifulSoup, most of a
        feedback page's time) to give images without one an `alt` text and JupyterLab's
        cells a `tabindex`: a page with no image and none of those cells (nbgrader's
        feedback template is the classic one) is left as the template made it."""
        html, resources = self._render(nb, resources, **kw)
        lowered = html.lower()
        if "<img" not in lowered and "jp-notebook" not in lowered:
            return html, resources
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(html, features="html.parser")  # as nbconvert 7 does it
        missing_alt = 0
        for elem in soup.select("img:not([alt])"):
            elem.attrs["alt"] = "No description has been provided for this image"
            missing_alt += 1
        if missing_alt:
            self.log.warning("Alternative text is missing on %s image(s).", missing_alt)
        for elem in soup.select(".jp-Notebook div.jp-Cell-inputWrapper"):
            elem.attrs["tabindex"] = "0"
        for elem in soup.select(".jp-Notebook div.jp-OutputArea-output"):
            elem.attrs["tabindex"] = "0"
        return str(soup), resources

    def _render(self, nb, resources, **kw):
        """HTMLExporter.from_notebook_node up to its last step (nbconvert 7's code)."""
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight_code = self.filters.get(
            "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)
        )
        if isinstance(highlight_code, Highlight2HTML):  # nbconvert's own: its HTML remembered
            highlight_code = _RememberedHighlight(highlight_code)
        resources = self._init_resources(resources)
        data_type = WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources
        )
        self.register_filter("highlight_code", highlight_code)
        self.register_filter("filter_data_type", data_type)
        return TemplateExporter.from_notebook_node(self, nb, resources, **kw)
