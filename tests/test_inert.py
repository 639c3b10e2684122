"""Student text made inert: rendered by a Markdown library, it is the characters it was, no link,
image or markup; read by a spreadsheet, no cell is a formula."""

from __future__ import annotations

import mistune
import pytest

from attention_course.inert import csv_cell, csv_row, markdown_text, terminal_text
from tests.html_page import Page

HOSTILE = [
    "![tracker](http://evil.example/t.png)",
    "[Click for your regrade](http://evil.example/regrade)",
    "<img src=x onerror=alert(1)> <a href='http://evil.example'>x</a> <script>alert(1)</script>",
    "visit http://evil.example or www.evil.example or mail me@evil.example",
    "<http://evil.example> [ref]: http://evil.example &lt;b&gt; &amp; &#60;",
    "**bold** _em_ ~~gone~~ `code` ``two`` | a\\|b | \\ end\\",
    '=HYPERLINK("http://evil.example","x") # heading? > quote? - item?',
]

# GFM-like: tables, strikethrough, bare URLs as links (as GitHub and GitLab render them).
RENDER = mistune.create_markdown(escape=True, plugins=["table", "strikethrough", "url"])


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_in_a_table_cell_is_the_text_and_nothing_else(text):
    source = f"| a | b |\n|---|---|\n| {markdown_text(text)} | after |\n"
    page = Page(RENDER(source))
    rows = ["table", "thead", "tr", "th", "th", "tbody", "tr", "td", "td"]
    assert [t for t, _ in page.tags] == rows
    assert page.text.split()[2:-1] == text.split()  # after the heads "a b", before "after"


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_in_a_list_item_is_the_text_and_nothing_else(text):
    page = Page(RENDER(f"- {markdown_text(text)}\n"))
    assert [t for t, _ in page.tags] == ["ul", "li"]
    assert page.text.split() == text.split()


def test_escaped_text_keeps_letters_digits_and_spaces_as_they_are():
    assert markdown_text("softmax raised ValueError 42") == "softmax raised ValueError 42"
    assert markdown_text("a\n b\tc") == "a b c"  # one line: it lands in a table cell


@pytest.mark.parametrize(
    "cell, inert",
    [
        ('=HYPERLINK("http://evil.example")', '\'=HYPERLINK("http://evil.example")'),
        ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-1.5", "-1.5"),  # a number stays a number
        ("+2e-3", "+2e-3"),
        ("softmax raised ValueError: =1", "softmax raised ValueError: =1"),
        (3, 3),
    ],
)
def test_a_csv_cell_is_never_a_formula(cell, inert):
    assert csv_cell(cell) == inert
    assert csv_row(["x", cell]) == ["x", inert]


@pytest.mark.parametrize(
    "text",
    [
        "\x1b]0;owned\x07title",  # retitles the terminal
        "\x1b[2J\x1b[Hscreen cleared",  # clears the screen
        "PASS [1 pt] fake\r",  # a carriage return that overwrites the line
        "\x9b31mred",  # the one-byte CSI
    ],
)
def test_terminal_text_has_no_control_character_but_lines_and_tabs(text):
    shown = terminal_text(text + "\n\tnext line")
    assert shown.endswith("\n\tnext line")
    assert not any(ord(c) < 32 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F for c in shown)
    assert shown.replace("\n\tnext line", "").encode().decode("unicode_escape") == text
