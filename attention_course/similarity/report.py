"""The similarity report as files: Markdown, an offline HTML page with the two students' cells
side by side, and a CSV for the LMS. Per pair of students first (every function, the pair's
score, why it is reported), then the groups and each function. Every matching line says how
many students of the class share its code; lines from a known source say which.

Everything a student wrote (code, and ids, which are folder names) is escaped for each format;
nothing is sent anywhere. The HTML page has no scripts; its highlights keep a mark of their own
(a border and a text tag) where colours are forced, and it reads at 320 px wide.
"""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path

from attention_course.settings import SIMILARITY
from attention_course.similarity.compare import Match, Pair, Similarities

# Characters with a meaning inside a Markdown line (links, emphasis, code, HTML, tables).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~&])")

EXPLAIN = (
    "Each pair of students is compared over all the functions both handed in, after what the "
    "release and the known sources gave them, and what copying disguises (names, formatting, "
    "comments, statement order, helpers, equivalent numpy calls, temporaries, constants, dead "
    "code and asserts), are taken away. Code is weighed by how rare it is in the class: what "
    "many students wrote independently alike counts little, and students who hand in the same "
    "code count once, so a group of copies does not hide itself. Containment: of the smaller "
    "submission's uncommon code, the share found in the other's (padding a copy cannot lower "
    "it). Similarity: the share of both submissions' uncommon code that they hold in common. "
    "Score: the mean of the two; 1 is the same code, which nobody else wrote. A score is a "
    "lead, not a verdict: read the two cells."
)


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


def _students(n: int) -> str:
    return f"{n} student" + ("" if n == 1 else "s")


def _known_sources(found: Similarities) -> str:
    names = ["the release (stubs, visible checks)", *found.known]
    return ", ".join(names)


def _summary(found: Similarities) -> list[str]:
    """The summary's lines, as plain text (escaped by each format)."""
    compared = sorted({s for s, _ in found.cells})
    return [
        f"{len(found.students)} submission(s), {len(compared)} with code to compare",
        f"known sources: {_known_sources(found)}",
        f"pairs reported: {len(found.pairs)} (score at least {found.threshold:g}, or "
        "identical uncommon code)",
        f"groups of three or more students, every two of them a reported pair: "
        f"{len(found.groups)}"
        + (f" (the largest: {len(found.groups[0].members)})" if found.groups else ""),
        f"highest score not reported: {found.highest_below:.2f}",
    ]


def _not_detailed(found: Similarities) -> str:
    shown = SIMILARITY.detailed_pairs
    return (
        f"Pairs {shown + 1} to {len(found.pairs)} are in the table of pairs and in "
        f"similarity.csv; their cells are not shown here (the {shown} most similar are)."
    )


def _group_line(number: int, group) -> str:
    shared = ", ".join(group.functions) or "no one function"
    text = (
        f"Group {number}, {_students(len(group.members))}: {', '.join(group.members)}. "
        f"Shared code in: {shared}. Lowest score of a pair inside: {group.lowest:.2f}."
    )
    if group.identical:
        text += " Every pair identical after normalisation in some function."
    return text


def _tag(
    line: int, shared: dict[int, int], common: tuple[int, ...], known: dict[int, str]
) -> tuple[str, str, str]:
    """(css class, short visible tag, words for it) of one line of a cell."""
    if line in shared:
        n = shared[line]
        kind = "match common" if line in common else "match"
        return kind, f"{n}\u00d7", f"matches the other's code; {_students(n)} share it"
    if line in known:
        return "known", "src", f"from {known[line]}"
    return "", "", ""


# ---- Markdown


def _md_code(
    code: str, shared: dict[int, int], common: tuple[int, ...], known: dict[int, str]
) -> str:
    rows = []
    for i, text in enumerate(code.splitlines()[: SIMILARITY.shown_lines], start=1):
        kind, tag, _ = _tag(i, shared, common, known)
        mark = f">{tag}" if kind.startswith("match") else ("~" if kind == "known" else "")
        rows.append(f"{mark:<5}{text}")
    return "\n".join(rows)


def _md_pair(found: Similarities, number: int, p: Pair) -> list[str]:
    lines = [
        "",
        f"### {number}. {md_text(p.a)} and {md_text(p.b)}: {p.score:.2f}",
        "",
        f"Containment {p.containment:.2f}, similarity {p.similarity:.2f}"
        + (f", group {p.group}" if p.group else "")
        + ".",
        "",
    ]
    lines += [f"- {md_text(w)}" for w in p.why]
    lines += [
        "",
        "| function | containment | similarity | identical | lines (first) | lines (second) |",
        "|---|---:|---:|---|---|---|",
    ]
    for m in p.matches:
        lines.append(
            f"| {md_text(m.function)} | {m.containment:.2f} | {m.similarity:.2f} | "
            f"{'yes' if m.identical else ''} | {_ranges(m.lines_a)} | {_ranges(m.lines_b)} |"
        )
    for m in p.matches:
        if not (m.lines_a or m.identical):
            continue
        lines += ["", f"#### {md_text(m.function)}", ""]
        for student, shared, common in (
            (p.a, m.shared_a, m.common_a),
            (p.b, m.shared_b, m.common_b),
        ):
            known = found.known_lines.get((student, m.function), {})
            code = _md_code(found.cells[(student, m.function)], shared, common, known)
            fence = _fence(code)
            lines += [f"{md_text(student)}:", "", fence, code, fence, ""]
    return lines


def to_markdown(found: Similarities) -> str:
    lines = [
        f"# Similarity report: {md_text(found.assignment)}",
        "",
        md_text(EXPLAIN),
        "",
        "In the code below, `>N` marks a line that matches the other student's code (N: how "
        "many students of the class share it), `~` a line from a known source.",
        "",
    ]
    lines += [f"- {md_text(s)}" for s in _summary(found)]
    lines += ["", "## Pairs of students", ""]
    if found.pairs:
        lines += [
            "| pair | student | student | score | containment | similarity | identical | group |",
            "|---:|---|---|---:|---:|---:|---|---:|",
        ]
        for i, p in enumerate(found.pairs, start=1):
            same = ", ".join(m.function for m in p.matches if m.identical)
            lines.append(
                f"| {i} | {md_text(p.a)} | {md_text(p.b)} | {p.score:.2f} | "
                f"{p.containment:.2f} | {p.similarity:.2f} | {md_text(same)} | "
                f"{p.group or ''} |"
            )
    else:
        lines.append("No pair reported.")
    if found.groups:
        lines += ["", "## Groups of three or more", ""]
        lines += [f"- {md_text(_group_line(i, g))}" for i, g in enumerate(found.groups, start=1)]
    if found.pairs:
        lines += ["", "## Each pair, function by function"]
    for i, p in enumerate(found.pairs[: SIMILARITY.detailed_pairs], start=1):
        lines += _md_pair(found, i, p)
    if len(found.pairs) > SIMILARITY.detailed_pairs:
        lines += ["", md_text(_not_detailed(found))]
    lines += [
        "",
        "## By function",
        "",
        "| function | compared | pairs matching | highest containment not reported |",
        "|---|---:|---:|---:|",
    ]
    for f in found.functions:
        lines.append(
            f"| {md_text(f.function)} | {f.compared} | {len(f.pairs)} | {f.highest_below:.2f} |"
        )
    if found.unreadable or found.skipped:
        lines += ["", "## Not compared", ""]
        lines += [f"- {md_text(s)}: {md_text(why)}" for s, why in sorted(found.unreadable.items())]
        lines += [f"- {md_text(s)}, {md_text(f)}: {md_text(why)}" for s, f, why in found.skipped]
    return "\n".join(lines) + "\n"


# ---- HTML

STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fff;
  line-height: 1.45; }
main { padding: 1em; max-width: 110em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.3em; margin-top: 1.6em; }
h3 { font-size: 1.1em; } h4 { font-size: 1em; margin: 1em 0 0.3em; }
h1, h2, h3, h4, p, li, td, th { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.4em 0 0.8em; }
td, th { border: 1px solid #767676; padding: 0.2em 0.5em; text-align: left; }
td.n { text-align: right; }
.pair { border-top: 2px solid #1b1b1b; margin: 1.5em 0; padding-top: 0.2em; }
.sides { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 0.8em; }
@media (max-width: 50em) { .sides { grid-template-columns: minmax(0, 1fr); } }
.side { min-width: 0; border: 1px solid #767676; }
.side h5 { margin: 0; padding: 0.3em 0.5em; background: #eee; font-size: 0.95em;
  overflow-wrap: anywhere; }
pre { margin: 0; padding: 0.3em 0; overflow-x: auto; font-size: 0.85em; line-height: 1.4; }
pre:focus { outline: 3px solid #1a55b0; outline-offset: -3px; }
.ln { display: block; white-space: pre; padding: 0 0.5em 0 0.35em; }
.no, .tag { display: inline-block; color: #4a4a4a; user-select: none; }
.no { width: 2.6em; text-align: right; padding-right: 0.4em; }
.tag { width: 3.2em; font-weight: bold; }
.ln.match { background: #ffd54f; border-left: 0.35em solid #7a4f00; padding-left: 0; }
.ln.match.common { background: #fff4cf; border-left: 0.35em dashed #a07a2c; }
.ln.known { background: #e6ecf7; border-left: 0.35em dotted #3b5b8c; padding-left: 0; }
.ln.known .tag { color: #2c4770; font-weight: normal; }
.vh { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
.legend span.ln { display: inline-block; white-space: normal; padding: 0 0.4em; }
@media (forced-colors: active) {
  .ln.match { forced-color-adjust: none; background: Highlight; color: HighlightText;
    border-left-color: HighlightText; }
  .ln.match .no, .ln.match .tag { color: HighlightText; }
  .ln.match.common { background: Canvas; color: CanvasText; border-left-color: CanvasText; }
  .ln.match.common .no, .ln.match.common .tag { color: CanvasText; }
  .ln.known { border-left-color: CanvasText; text-decoration: underline dotted; }
}
"""


def _html_code(
    code: str, shared: dict[int, int], common: tuple[int, ...], known: dict[int, str], label: str
) -> str:
    rows = []
    for i, text in enumerate(code.splitlines()[: SIMILARITY.shown_lines], start=1):
        kind, tag, words = _tag(i, shared, common, known)
        cls = f"ln {kind}" if kind else "ln"
        hidden = f'<span class="vh">({html.escape(words)}) </span>' if words else ""
        rows.append(
            f'<span class="{cls}"><span class="no" aria-hidden="true">{i}</span>'
            f'<span class="tag" aria-hidden="true">{tag}</span>{hidden}'
            f"{html.escape(text) or ' '}</span>"
        )
    return f'<pre tabindex="0" aria-label="{html.escape(label)}"><code>{"".join(rows)}</code></pre>'


def _html_match(found: Similarities, p: Pair, m: Match) -> str:
    sides = []
    for student, shared, common in ((p.a, m.shared_a, m.common_a), (p.b, m.shared_b, m.common_b)):
        known = found.known_lines.get((student, m.function), {})
        code = _html_code(
            found.cells[(student, m.function)], shared, common, known, f"{student}, {m.function}"
        )
        sides.append(f'<div class="side"><h5>{html.escape(student)}</h5>{code}</div>')
    note = ", identical after normalisation" if m.identical else ""
    return (
        f"<h4>{html.escape(m.function)}: containment {m.containment:.2f}, similarity "
        f'{m.similarity:.2f}{note}</h4><div class="sides">{"".join(sides)}</div>'
    )


def _html_pair(found: Similarities, number: int, p: Pair) -> str:
    e = html.escape
    group = f', <a href="#group-{p.group}">group {p.group}</a>' if p.group else ""
    rows = "".join(
        f"<tr><th scope='row'>{e(m.function)}</th><td class='n'>{m.containment:.2f}</td>"
        f"<td class='n'>{m.similarity:.2f}</td><td>{'yes' if m.identical else ''}</td></tr>"
        for m in p.matches
    )
    table = (
        '<div class="scroll" tabindex="0" role="region" aria-label="functions of pair '
        f'{number}"><table><tr><th scope="col">function</th><th scope="col">containment</th>'
        '<th scope="col">similarity</th><th scope="col">identical</th></tr>'
        f"{rows}</table></div>"
    )
    code = "".join(_html_match(found, p, m) for m in p.matches if m.lines_a or m.identical)
    return (
        f'<section class="pair" id="pair-{number}" aria-labelledby="pair-{number}-title">'
        f'<h3 id="pair-{number}-title">{number}. {e(p.a)} and {e(p.b)}: '
        f"score {p.score:.2f}</h3>"
        f"<p>Containment {p.containment:.2f}, similarity {p.similarity:.2f}{group}.</p>"
        f"<ul>{''.join(f'<li>{e(w)}</li>' for w in p.why)}</ul>{table}{code}</section>"
    )


def _html_pairs_table(found: Similarities) -> str:
    e = html.escape
    rows = []
    for i, p in enumerate(found.pairs, start=1):
        same = ", ".join(m.function for m in p.matches if m.identical)
        group = f"<a href='#group-{p.group}'>{p.group}</a>" if p.group else ""
        link = f"<a href='#pair-{i}'>{i}</a>" if i <= SIMILARITY.detailed_pairs else str(i)
        rows.append(
            f"<tr><td class='n'>{link}</td><td>{e(p.a)}</td>"
            f"<td>{e(p.b)}</td><td class='n'>{p.score:.2f}</td>"
            f"<td class='n'>{p.containment:.2f}</td><td class='n'>{p.similarity:.2f}</td>"
            f"<td>{e(same)}</td><td class='n'>{group}</td></tr>"
        )
    return (
        '<div class="scroll" tabindex="0" role="region" aria-label="pairs reported"><table>'
        "<tr><th scope='col'>pair</th><th scope='col'>student</th><th scope='col'>student</th>"
        "<th scope='col'>score</th><th scope='col'>containment</th>"
        "<th scope='col'>similarity</th><th scope='col'>identical after normalisation</th>"
        f"<th scope='col'>group</th></tr>{''.join(rows)}</table></div>"
    )


def to_html(found: Similarities) -> str:
    e = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>Similarity report: {e(found.assignment)}</title><style>{STYLE}</style>",
        "</head><body><main>",
        f"<h1>Similarity report: {e(found.assignment)}</h1>",
        f"<p>{e(EXPLAIN)}</p>",
        '<p class="legend">In the code: <span class="ln match"><span class="tag">N\u00d7'
        "</span>a line that matches the other student's code</span> (N: how many students "
        'of the class share it), <span class="ln match common"><span class="tag">N\u00d7'
        "</span>a match of code common in the class</span>, "
        '<span class="ln known"><span class="tag">src</span>a line from a known source'
        "</span> (which one is said to screen readers and in the Markdown report).</p>",
        "<ul>" + "".join(f"<li>{e(s)}</li>" for s in _summary(found)) + "</ul>",
        "<h2 id='pairs'>Pairs of students</h2>",
    ]
    if found.pairs:
        parts.append(_html_pairs_table(found))
    if found.groups:
        parts.append("<h2 id='groups'>Groups of three or more</h2><ul>")
        parts += [
            f"<li id='group-{i}'>{e(_group_line(i, g))}</li>"
            for i, g in enumerate(found.groups, start=1)
        ]
        parts.append("</ul>")
    parts.append("<h2 id='details'>Each pair, function by function</h2>")
    if not found.pairs:
        parts.append("<p>No pair reported.</p>")
    shown = found.pairs[: SIMILARITY.detailed_pairs]
    parts += [_html_pair(found, i, p) for i, p in enumerate(shown, start=1)]
    if len(found.pairs) > len(shown):
        parts.append(f"<p>{e(_not_detailed(found))}</p>")
    number = {(p.a, p.b): i for i, p in enumerate(found.pairs, start=1)}
    parts.append(
        "<h2 id='functions'>By function</h2>"
        '<div class="scroll" tabindex="0" role="region" aria-label="by function"><table>'
        "<tr><th scope='col'>function</th><th scope='col'>compared</th>"
        "<th scope='col'>pairs matching</th>"
        "<th scope='col'>highest containment not reported</th></tr>"
    )
    for f in found.functions:
        links = ", ".join(
            f"<a href='#pair-{number[(p.a, p.b)]}'>{e(p.a)} and {e(p.b)}</a>"
            for p in f.pairs
            if number[(p.a, p.b)] <= SIMILARITY.detailed_pairs
        )
        parts.append(
            f"<tr><th scope='row'>{e(f.function)}</th><td class='n'>{f.compared}</td>"
            f"<td>{len(f.pairs)}{': ' + links if links else ''}</td>"
            f"<td class='n'>{f.highest_below:.2f}</td></tr>"
        )
    parts.append("</table></div>")
    if found.unreadable or found.skipped:
        parts.append("<h2>Not compared</h2><ul>")
        parts += [f"<li>{e(s)}: {e(why)}</li>" for s, why in sorted(found.unreadable.items())]
        parts += [f"<li>{e(s)}, {e(f)}: {e(why)}</li>" for s, f, why in found.skipped]
        parts.append("</ul>")
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


# ---- CSV


def write_csv(found: Similarities, path: Path) -> None:
    """One row per reported pair: the pair's scores, group and why, then each function's
    containment and matching lines; then one row per unreadable submission."""
    functions = [f.function for f in found.functions]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        header = ["student_a", "student_b", "score", "containment", "similarity", "group"]
        header += ["identical", "why"]
        for f in functions:
            header += [f"{f}_containment", f"{f}_lines_a", f"{f}_lines_b"]
        writer.writerow(header)
        for p in found.pairs:
            row = [csv_text(p.a), csv_text(p.b), f"{p.score:.4f}", f"{p.containment:.4f}"]
            row += [f"{p.similarity:.4f}", str(p.group or "")]
            row += [csv_text(" ".join(m.function for m in p.matches if m.identical))]
            row += [csv_text("; ".join(p.why))]
            for f in functions:
                m = p.match(f)
                row += (
                    [
                        f"{m.containment:.4f}",
                        csv_text(_ranges(m.lines_a)),
                        csv_text(_ranges(m.lines_b)),
                    ]
                    if m
                    else ["", "", ""]
                )
            writer.writerow(row)
        for s, why in sorted(found.unreadable.items()):
            empty = [""] * (len(header) - 3)
            writer.writerow([csv_text(s), "", "", *empty[:4], csv_text("unreadable: " + why)])


def write_report(found: Similarities, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    md, page, table = (folder / name for name in SIMILARITY.files)
    md.write_text(to_markdown(found), encoding="utf-8")
    page.write_text(to_html(found), encoding="utf-8")
    write_csv(found, table)
    return [md, page, table]
