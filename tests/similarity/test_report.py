"""The report's files: per pair of students first (every function, the score, why), each
matching line with how many students share it, lines from a known source named; and
everything students wrote escaped (CSV formulas, HTML, Markdown)."""

from __future__ import annotations

import csv
import html
import re

from attention_course.similarity.compare import FunctionResult, Group, Match, Pair, Similarities
from attention_course.similarity.report import csv_text, md_text, to_html, to_markdown, write_csv

EVIL = '=HYPERLINK("http://x")'
TAG = "<script>alert(1)</script>"
SOFTMAX_A = "def softmax(z):\n    z = z - z.max()\n    return '</pre><img src=x>'\n"
SOFTMAX_B = "def softmax(z):\n    ```\n    z = z - z.max()\n    return z  # | * _\n"
MASK = "def causal_mask(n):\n    return np.triu(np.ones((n, n), dtype=bool), k=1)\n"


def found() -> Similarities:
    softmax = Match("softmax", 0.9, 0.8, True, (1, 2), (2, 3), {1: 2, 2: 2}, {2: 2, 3: 2})
    mask = Match("causal_mask", 0.2, 0.2, False, (2,), (2,), {2: 9}, {2: 9}, (2,), (2,))
    why = ("identical after normalisation, and uncommon: softmax", "score 0.85 at or above 0.5")
    pair = Pair(EVIL, TAG, 0.85, 0.9, 0.8, (softmax, mask), why, group=1)
    result = Similarities("attention_basics", [EVIL, TAG, "@sum", "c"], 0.5)
    result.pairs = [pair]
    result.groups = [Group((EVIL, TAG, "c"), ("softmax",), 0.7, False)]
    result.functions = [
        FunctionResult("softmax", 3, [pair], 0.1),
        FunctionResult("causal_mask", 3, [], 0.2),
    ]
    result.known = ["the course text"]
    result.cells = {
        (EVIL, "softmax"): SOFTMAX_A,
        (TAG, "softmax"): SOFTMAX_B,
        (EVIL, "causal_mask"): MASK,
        (TAG, "causal_mask"): MASK,
    }
    result.known_lines = {(TAG, "softmax"): {4: "the course text"}}
    result.unreadable = {"@sum": "-1+1 is not JSON"}
    return result


def test_csv_is_one_row_per_pair_and_never_starts_a_formula(tmp_path):
    path = tmp_path / "s.csv"
    write_csv(found(), path)
    rows = list(csv.DictReader(path.open()))
    pair, unreadable = rows
    assert pair["student_a"] == "'" + EVIL and pair["score"] == "0.8500"
    assert pair["softmax_containment"] == "0.9000" and pair["softmax_lines_a"] == "1-2"
    assert pair["causal_mask_containment"] == "0.2000" and pair["identical"] == "softmax"
    assert pair["group"] == "1" and "identical after normalisation" in pair["why"]
    assert (
        unreadable["student_a"] == "'@sum" and unreadable["why"] == "unreadable: -1+1 is not JSON"
    )
    cells = [c for row in csv.reader(path.open()) for c in row]
    assert not any(c[:1] in "=+-@" and c for c in cells), cells
    assert [csv_text(x) for x in ("+1", "-1", "@a", "a=1")] == ["'+1", "'-1", "'@a", "a=1"]


def test_html_escapes_ids_and_code():
    page = to_html(found())
    assert TAG not in page and html.escape(TAG) in page
    assert "<img" not in page and "&lt;/pre&gt;&lt;img src=x&gt;" in page
    assert "<script" not in page  # the page runs nothing


def test_html_lists_pairs_first_then_each_pair_with_every_function():
    page = to_html(found())
    order = [page.index(s) for s in ("id='pairs'", "id='groups'", "id='details'", "id='functions'")]
    assert order == sorted(order)
    detail = page[page.index('id="pair-1"') :]
    for function in ("softmax", "causal_mask"):
        assert f"<th scope='row'>{function}</th>" in detail
    assert "score 0.85" in detail and html.escape("identical after normalisation") in detail


def test_each_matching_line_says_how_many_students_share_it():
    page = to_html(found())
    line = re.search(r'<span class="ln match">(.*?)    z = z - z.max\(\)</span>', page)
    assert line is not None
    assert '<span class="tag" aria-hidden="true">2\u00d7</span>' in line.group(1)
    assert "(matches the other&#x27;s code; 2 students share it)" in line.group(1)
    # common code is a match too, marked so (and so in forced colours: a border, not a fill)
    assert '<span class="ln match common">' in page and "9 students share it" in page


def test_lines_from_a_known_source_are_named():
    page = to_html(found())
    assert "from the course text" in page
    text = to_markdown(found())
    assert "known sources: the release (stubs, visible checks), the course text" in text


def test_markdown_escapes_ids_and_fences_code_safely():
    text = to_markdown(found())
    assert TAG not in text and md_text(TAG) in text
    assert "````" in text  # a code fence longer than the student's ``` run
    assert md_text("a|b*c") == "a\\|b\\*c"
    # matching lines marked >N, lines from a known source ~
    assert re.search(r"^>2\u00d7  +    z = z - z.max\(\)$", text, flags=re.M)
    assert re.search(r"^~ +    return z  # \| \* _$", text, flags=re.M)
    assert text.index("## Pairs of students") < text.index("## Each pair, function by function")


def test_every_student_id_in_the_html_is_text_wherever_it_is_shown():
    """Each place the page shows a student id (the pairs' table, each pair's title and code,
    the groups, by function, the students not compared) shows it as text: ids that are
    markup (a folder may be named so) open no element anywhere in the page."""
    from html.parser import HTMLParser

    ids = [f"<b>s{n}</b>" for n in range(6)]
    softmax = Match("softmax", 0.9, 0.8, True, (1,), (1,), {1: 2}, {1: 2})
    pair = Pair(ids[0], ids[1], 0.85, 0.9, 0.8, (softmax,), ("score 0.85",), group=1)
    result = Similarities("attention_basics", ids, 0.5)
    result.pairs = [pair]
    result.groups = [Group((ids[0], ids[1], ids[2]), ("softmax",), 0.7, False)]
    result.functions = [FunctionResult("softmax", 3, [pair], 0.1)]
    result.cells = {(ids[0], "softmax"): SOFTMAX_A, (ids[1], "softmax"): SOFTMAX_A}
    result.unreadable = {ids[3]: "not JSON"}
    result.skipped = [(ids[4], "softmax", "too long")]
    page = to_html(result)

    class Tags(HTMLParser):
        opened: list[str] = []

        def handle_starttag(self, tag, attrs):
            self.opened.append(tag)

    parser = Tags()
    parser.feed(page)
    assert "b" not in parser.opened
    for student in ids[:5]:
        assert html.escape(student) in page, student
