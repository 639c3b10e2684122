"""Canvas QTI pieces: text2qti Markdown escaping and QTI 1.2 XML elements."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
PLACEHOLDER = "matching placeholder "
MD_SPECIAL = re.compile(r"([\\`*_\[\]$<>#|])")


def md(text: str) -> str:
    """Plain text as text2qti Markdown on one line: Markdown and LaTeX characters escaped."""
    return MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, f"{{{QTI_NS}}}{tag}", attrs)
    if text is not None:
        el.text = text
    return el


def metadata_field(meta: ET.Element, label: str, entry: str) -> None:
    f = sub(meta, "qtimetadatafield")
    sub(f, "fieldlabel", label)
    sub(f, "fieldentry", entry)


def html(text: str) -> str:
    return "<p>" + text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "</p>"
