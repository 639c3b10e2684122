"""The tags and text of an HTML page, for tests that check what rendered student text became."""

from __future__ import annotations

import html.parser


class Page(html.parser.HTMLParser):
    """The tags of an HTML page and its text."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text = ""
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text += data
