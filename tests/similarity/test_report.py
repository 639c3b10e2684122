"""The report's files escape what students wrote: CSV formulas, HTML, Markdown."""

from __future__ import annotations

import csv
import html

from attention_course.similarity.compare import FunctionResult, Pair, Similarities
from attention_course.similarity.report import csv_text, md_text, to_html, to_markdown, write_csv

EVIL = '=HYPERLINK("http://x")'
TAG = "<script>alert(1)</script>"


def found() -> Similarities:
    pair = Pair("softmax", EVIL, TAG, 0.9, (1, 2), (2,))
    result = Similarities("attention_basics", [EVIL, TAG, "@sum"], 0.5)
    result.functions = [FunctionResult("softmax", 2, [pair], [[EVIL, TAG]], 0.1)]
    result.cells = {
        (EVIL, "softmax"): "def softmax(z):\n    return '</pre><img src=x>'\n",
        (TAG, "softmax"): "def softmax(z):\n    ```\n    return z  # | * _\n",
    }
    result.unreadable = {"@sum": "-1+1 is not JSON"}
    return result


def test_csv_cells_never_start_a_formula(tmp_path):
    path = tmp_path / "s.csv"
    write_csv(found(), path)
    rows = list(csv.reader(path.open()))
    cells = [c for row in rows[1:] for c in row]
    assert EVIL not in cells and "'" + EVIL in cells and "'@sum" in cells
    assert not any(c[:1] in "=+-@" and c for c in cells), cells
    assert [csv_text(x) for x in ("+1", "-1", "@a", "a=1")] == ["'+1", "'-1", "'@a", "a=1"]


def test_html_escapes_ids_and_code():
    page = to_html(found())
    assert TAG not in page and html.escape(TAG) in page
    assert "<img" not in page and "&lt;/pre&gt;&lt;img src=x&gt;" in page


def test_markdown_escapes_ids_and_fences_code_safely():
    text = to_markdown(found())
    assert TAG not in text and md_text(TAG) in text
    assert "````" in text  # a code fence longer than the student's ``` run
    assert md_text("a|b*c") == "a\\|b\\*c"
