"""The class report as files: Markdown (printed too), two CSV tables and the figure.

What the failures said quotes student code, and student ids are folder names: in the Markdown
such text is escaped (no link, image or markup), in the CSV tables no cell can be read as a
formula (attention_course.inert)."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from attention_course.inert import csv_row, markdown_text
from attention_course.reports.class_report import BINS, ClassReport, ItemStats, ReportError

TOP_HINTS = 3  # failure messages shown per grader test
REPORT_FILES = ("report.md", "scores.csv", "pass_rates.csv", "report.png")


def histogram(totals: list[float], max_score: float, bins: int = BINS) -> list[int]:
    """Students per bin of `100 / bins` % of the points; full marks fall in the last bin."""
    counts = [0] * bins
    for total in totals:
        share = total / max_score if max_score else 0.0
        counts[min(bins - 1, max(0, int(share * bins + 1e-9)))] += 1
    return counts


def _cell(text: str) -> str:
    """Text for a Markdown table cell (messages quote student code: no HTML, no `|`)."""
    text = " ".join(str(text).split())
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def _hints(item: ItemStats, top: int = TOP_HINTS) -> list[str]:
    """What the failures said, for a table cell: each message (it quotes student code) as
    inert text, then how many students it was."""
    shown = [f"{markdown_text(text)} ({n})" for text, n in item.hints.most_common(top)]
    if len(item.hints) > top:
        shown.append(f"{len(item.hints) - top} other message(s)")
    if item.not_attempted:
        shown.append(f"not attempted ({item.not_attempted})")
    if item.pending:
        shown.append(f"to grade by hand ({item.pending})")
    return shown


def _summary(report: ClassReport) -> list[str]:
    """The report's heading and what it counts: who is late, not autograded, not reliable."""
    n = len(report.totals)
    totals = list(report.totals.values())
    pct = 100 * report.mean / report.max_score if report.max_score else 0.0
    graded = n - len(report.not_autograded)
    lines = [
        f"# Class report: {report.assignment}",
        "",
        f"{n} submission(s) in the gradebook: mean {report.mean:.4g} / {report.max_score:g} "
        f"({pct:.0f}%), sd {report.sd:.3g}, median {statistics.median(totals):g}, "
        f"min {min(totals):g}, max {max(totals):g}.",
    ]
    if report.not_autograded:
        lines.append(
            "Not autograded (0 points in the gradebook until autograded again): "
            + ", ".join(markdown_text(s) for s in report.not_autograded)
            + "."
        )
    if report.late:
        lines.append(
            "Late (nbgrader's late penalty, `c.LateSubmissionPlugin`, taken off their totals "
            "above and below; the function rows count what they handed in): "
            + ", ".join(
                f"{markdown_text(s)} (-{penalty:g})" for s, penalty in sorted(report.late.items())
            )
            + "."
        )
    if report.unreliable:
        lines.append(
            "Not reliable (their grading failed or did not finish: the gradebook's scores for "
            "them are left out of every figure here; autograde the assignment again): "
            + "; ".join(
                f"{markdown_text(s)} ({markdown_text(why)})"
                for s, why in sorted(report.unreliable.items())
            )
            + "."
        )
    skipped = (
        "a question left unanswered"
        if report.group_label == "quiz"
        else ("a failure of a function left as the stub")
    )
    lines += [
        f"Pass rates count the {graded} autograded submission(s) (full marks pass); {skipped} "
        "counts as *not attempted*.",
    ]
    return lines


def to_markdown(report: ClassReport, figure: str = "report.png") -> str:
    totals = list(report.totals.values())
    lines = [
        *_summary(report),
        "",
        "## Score distribution",
        "",
        f"| total (% of {report.max_score:g} points) | students | |",
        "|---|---:|---|",
    ]
    width = 100 // BINS
    for i, count in enumerate(histogram(totals, report.max_score)):
        upper = "100" if i == BINS - 1 else f"<{(i + 1) * width}"
        lines.append(f"| {i * width}–{upper}% | {count} | {'█' * count} |")
    label = report.group_label
    lines += [
        "",
        f"![score distribution, {label} means and pass rates]({figure})",
        "",
        f"## Each {label}: mean and spread (gradebook)",
        "",
        f"| {label} | points | mean | sd | min | max | full marks |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for g in report.groups:
        share = f" ({100 * g.mean / g.points:.0f}%)" if g.points else ""
        lines.append(
            f"| {g.name} | {g.points:g} | {g.mean:.3g}{share} | {g.sd:.3g} | "
            f"{min(g.scores):g} | {max(g.scores):g} | {g.full_marks}/{len(g.scores)} |"
        )
    item = report.item_label
    lines += [
        "",
        f"## Every {item}, most failed first",
        "",
        f"| pass rate | {label} | {item} | points | checks | what the failures said (students) |",
        "|---:|---|---|---:|---|---|",
    ]
    for t in report.items:
        hints = "<br>".join(_hints(t)) or "–"
        rate = f"{100 * t.pass_rate:.0f}%" if t.graded else "–"
        lines.append(
            f"| {rate} ({t.passed}/{t.graded}) | {t.group} | "
            f"{t.item.removeprefix('test_')} | {t.points:g} | {_cell(t.description)} | {hints} |"
        )
    if report.item_analysis:
        # it quotes wrong answers: its fence is longer than any run of backticks they hold
        runs = [len(r) for r in re.findall("`+", report.item_analysis)]
        fence = "`" * max([3, *(n + 1 for n in runs)])
        lines += ["", "## Item analysis", "", fence, report.item_analysis, fence]
    if report.notes:
        lines += ["", "## Notes", ""] + [f"- {markdown_text(note)}" for note in report.notes]
    return "\n".join(lines) + "\n"


def write_csvs(report: ClassReport, folder: Path) -> None:
    import csv

    label, item = report.group_label, report.item_label.split()[-1]
    with (folder / "scores.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
        writer.writerow([label, "points", "students", "mean", "sd", "min", "max", "full_marks"])
        for g in report.groups:
            writer.writerow(
                csv_row(
                    [g.name, f"{g.points:g}", len(g.scores), f"{g.mean:.6g}", f"{g.sd:.6g}"]
                    + [f"{min(g.scores):g}", f"{max(g.scores):g}", g.full_marks]
                )
            )
        writer.writerow(
            ["total", f"{report.max_score:g}", len(report.totals), f"{report.mean:.6g}"]
            + [f"{report.sd:.6g}", f"{min(report.totals.values()):g}"]
            + [f"{max(report.totals.values()):g}"]
            + [sum(t >= report.max_score for t in report.totals.values())]
        )
    with (folder / "pass_rates.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
        writer.writerow(
            [label, item, "description", "points", "students", "passed", "failed"]
            + ["not_attempted", "pass_rate", "top_failure", "top_failure_students"]
        )
        for t in report.items:
            top, count = (t.hints.most_common(1) or [("", 0)])[0]
            writer.writerow(
                csv_row(
                    [t.group, t.item, t.description, f"{t.points:g}", t.graded, t.passed]
                    + [t.failed, t.not_attempted, f"{t.pass_rate:.6g}", top, count]
                )
            )


def write_report(report: ClassReport, folder: Path) -> list[Path]:
    """Write report.md, scores.csv, pass_rates.csv and report.png into `folder`."""
    from attention_course.reports.figure import write_figure

    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "report.md").write_text(to_markdown(report), encoding="utf-8")
        write_csvs(report, folder)
        write_figure(report, folder / "report.png")
    except OSError as exc:
        raise ReportError(f"cannot write the report into {folder}: {exc.strerror}") from None
    return [folder / name for name in REPORT_FILES]
