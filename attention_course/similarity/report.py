"""The similarity report as files: Markdown, an offline HTML page with the matching lines side
by side, and a CSV for the LMS. Everything a student wrote (code, and ids, which are folder
names) is escaped for each format; nothing is sent anywhere."""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path

from attention_course.settings import SIMILARITY
from attention_course.similarity.compare import Pair, Similarities

# Characters with a meaning inside a Markdown line (links, emphasis, code, HTML, tables).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~&])")


def md_text(text: str) -> str:
    """Text for Markdown, every character with a meaning there escaped (one line)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def csv_text(text: object) -> str:
    """A CSV cell a spreadsheet will not run: a leading = + - @ (or tab, CR) is quoted away."""
    value = str(text)
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _ranges(lines: tuple[int, ...]) -> str:
    out: list[str] = []
    for n in lines:
        if out and int(out[-1].split("-")[-1]) == n - 1:
            out[-1] = out[-1].split("-")[0] + f"-{n}"
        else:
            out.append(str(n))
    return ", ".join(out) or "-"


def _fence(code: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


def _marked(code: str, lines: tuple[int, ...]) -> str:
    keep = set(lines)
    return "\n".join(
        ("> " if i in keep else "  ") + text
        for i, text in enumerate(code.splitlines()[: SIMILARITY.shown_lines], start=1)
    )


def to_markdown(found: Similarities) -> str:
    lines = [
        f"# Similarity report: {md_text(found.assignment)}",
        "",
        f"{len(found.students)} submission(s); each pair's solution cells compared function by "
        "function after the release's stub and visible checks, docstrings, comments, formatting, "
        "names and the order of independent statements are taken away. Code many students "
        "share (and the instructor's solution) counts less. Pairs scoring at least "
        f"{found.threshold:g} are listed, most similar first.",
        "",
        "| function | compared | pairs reported | clusters | highest score not reported |",
        "|---|---:|---:|---:|---:|",
    ]
    for f in found.functions:
        lines.append(
            f"| {md_text(f.function)} | {f.compared} | {len(f.pairs)} | {len(f.clusters)} | "
            f"{f.highest_below:.2f} |"
        )
    if found.unreadable:
        lines += ["", "## Not compared: unreadable submissions", ""]
        lines += [f"- {md_text(s)}: {md_text(why)}" for s, why in sorted(found.unreadable.items())]
    if found.skipped:
        lines += ["", "## Cells not compared", ""]
        lines += [f"- {md_text(s)}, {md_text(f)}: {md_text(why)}" for s, f, why in found.skipped]
    for f in found.functions:
        if not f.pairs:
            continue
        lines += ["", f"## {md_text(f.function)}", ""]
        lines += [
            f"- Cluster {i}: {', '.join(md_text(s) for s in group)}"
            for i, group in enumerate(f.clusters, start=1)
        ]
        lines += ["", "| score | student | lines | student | lines |", "|---:|---|---|---|---|"]
        for p in f.pairs:
            lines.append(
                f"| {p.score:.2f} | {md_text(p.a)} | {_ranges(p.lines_a)} | {md_text(p.b)} | "
                f"{_ranges(p.lines_b)} |"
            )
        for p in f.pairs:
            lines += ["", f"### {md_text(p.a)} and {md_text(p.b)}: {p.score:.2f}", ""]
            for student, marked in ((p.a, p.lines_a), (p.b, p.lines_b)):
                code = _marked(found.cells[(student, f.function)], marked)
                fence = _fence(code)
                lines += [f"{md_text(student)} (matching lines marked >):", "", fence, code, fence]
    return "\n".join(lines) + "\n"


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
td, th { border: 1px solid #bbb; padding: 0.2em 0.6em; text-align: left; }
.pair { margin: 1em 0 2em; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.side { min-width: 0; border: 1px solid #999; }
.side h4 { margin: 0; padding: 0.3em 0.5em; background: #eee; font-size: 0.95em; }
pre { margin: 0; padding: 0.3em 0; overflow-x: auto; font-size: 0.85em; line-height: 1.35; }
pre span { display: block; padding: 0 0.5em; white-space: pre; }
pre span::before { content: attr(data-line); display: inline-block; width: 2.5em;
  color: #777; }
pre span.match { background: #ffd866; }
.score { font-weight: bold; }
"""


def _code(code: str, lines: tuple[int, ...], student: str) -> str:
    keep = set(lines)
    rows = []
    for i, text in enumerate(code.splitlines()[: SIMILARITY.shown_lines], start=1):
        cls = ' class="match"' if i in keep else ""
        rows.append(f'<span data-line="{i}"{cls}>{html.escape(text) or " "}</span>')
    return f'<div class="side"><h4>{html.escape(student)}</h4><pre>{"".join(rows)}</pre></div>'


def _pair_html(p: Pair, found: Similarities) -> str:
    left = _code(found.cells[(p.a, p.function)], p.lines_a, p.a)
    right = _code(found.cells[(p.b, p.function)], p.lines_b, p.b)
    return (
        f'<div class="pair"><h3>{html.escape(p.a)} and {html.escape(p.b)}: '
        f'<span class="score">{p.score:.2f}</span></h3>'
        f'<div class="sides">{left}{right}</div></div>'
    )


def to_html(found: Similarities) -> str:
    e = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Similarity report: {e(found.assignment)}</title><style>{STYLE}</style>",
        "</head><body>",
        f"<h1>Similarity report: {e(found.assignment)}</h1>",
        f"<p>{len(found.students)} submission(s). Pairs scoring at least {found.threshold:g} "
        "(1 = the same code, which no other student wrote), most similar first; lines that "
        "match are highlighted. Stubs, visible checks, docstrings, comments, formatting, "
        "names and statement order do not count; code many students share counts less.</p>",
        "<table><tr><th>function</th><th>compared</th><th>pairs reported</th>"
        "<th>highest score not reported</th></tr>",
    ]
    for f in found.functions:
        parts.append(
            f"<tr><td>{e(f.function)}</td><td>{f.compared}</td><td>{len(f.pairs)}</td>"
            f"<td>{f.highest_below:.2f}</td></tr>"
        )
    parts.append("</table>")
    if found.unreadable or found.skipped:
        parts.append("<h2>Not compared</h2><ul>")
        parts += [f"<li>{e(s)}: {e(why)}</li>" for s, why in sorted(found.unreadable.items())]
        parts += [f"<li>{e(s)}, {e(f)}: {e(why)}</li>" for s, f, why in found.skipped]
        parts.append("</ul>")
    for f in found.functions:
        if not f.pairs:
            continue
        parts.append(f"<h2 id='{e(f.function)}'>{e(f.function)}</h2>")
        for i, group in enumerate(f.clusters, start=1):
            parts.append(f"<p>Cluster {i}: {e(', '.join(group))}</p>")
        parts += [_pair_html(p, found) for p in f.pairs]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_csv(found: Similarities, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["function", "student_a", "student_b", "score", "cluster"] + ["lines_a", "lines_b"]
        )
        for f in found.functions:
            member = {s: i for i, g in enumerate(f.clusters, start=1) for s in g}
            for p in f.pairs:
                writer.writerow(
                    [csv_text(f.function), csv_text(p.a), csv_text(p.b), f"{p.score:.4f}"]
                    + [
                        member.get(p.a, ""),
                        csv_text(_ranges(p.lines_a)),
                        csv_text(_ranges(p.lines_b)),
                    ]
                )
        for s, why in sorted(found.unreadable.items()):
            writer.writerow(["", csv_text(s), "", "", "", csv_text("unreadable: " + why), ""])


def write_report(found: Similarities, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    md, page, table = (folder / name for name in SIMILARITY.files)
    md.write_text(to_markdown(found), encoding="utf-8")
    page.write_text(to_html(found), encoding="utf-8")
    write_csv(found, table)
    return [md, page, table]
