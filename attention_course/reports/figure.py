"""The class report's figure: score histogram, each function's mean and spread, pass rates."""

from __future__ import annotations

from pathlib import Path

from attention_course.reports.class_report import BINS, ClassReport


def write_figure(report: ClassReport, path: Path) -> None:
    """One PNG, three panels; made with matplotlib's object API (no global pyplot state)."""
    from matplotlib.figure import Figure

    items = report.items
    fig = Figure(figsize=(12, 4.6 + 0.24 * len(items)), dpi=100, layout="constrained")
    heights = [4.0, 0.6 + 0.24 * len(items)]
    top, bottom = fig.subfigures(2, 1, squeeze=False, height_ratios=heights)[:, 0]
    fig.suptitle(f"Class report: {report.assignment}", fontsize=14, fontweight="bold")
    hist, means = top.subplots(1, 2)
    rates = bottom.subplots()

    shares = [100 * t / report.max_score for t in report.totals.values()]
    hist.hist(shares, bins=[i * 100 / BINS for i in range(BINS + 1)], color="#4c72b0", ec="white")
    hist.set_xlim(0, 100)
    hist.set_xlabel(f"total score (% of {report.max_score:g} points)")
    hist.set_ylabel("students")
    hist.yaxis.get_major_locator().set_params(integer=True)
    mean = 100 * report.mean / report.max_score
    hist.axvline(mean, color="#c44e52", ls="--", label=f"mean {mean:.0f}%")
    hist.legend(loc="upper center")
    hist.set_title(f"Score distribution ({len(shares)} submissions)")

    names = [g.name for g in report.groups]
    scale = [100 / g.points if g.points else 0.0 for g in report.groups]
    xs = range(len(names))
    heights = [g.mean * k for g, k in zip(report.groups, scale, strict=True)]
    spreads = [g.sd * k for g, k in zip(report.groups, scale, strict=True)]
    # mean ± sd, cut at 0% and 100%: no student scores outside them
    below = [min(sd, h) for h, sd in zip(heights, spreads, strict=True)]
    above = [min(sd, 100 - h) for h, sd in zip(heights, spreads, strict=True)]
    means.bar(xs, heights, yerr=[below, above], color="#55a868", capsize=4)
    for x, g, k in zip(xs, report.groups, scale, strict=True):
        dots = _spread([s * k for s in g.scores])
        means.scatter(
            [x + dx for dx, _ in dots], [y for _, y in dots], color="black", s=12, zorder=3
        )
    means.set_xticks(list(xs), names, rotation=25, ha="right")
    means.set_ylim(0, 110)
    means.set_ylabel("% of its points")
    means.set_title(f"Each {report.group_label}: mean ± sd (within 0-100%), a dot per student")

    ys = list(range(len(items)))[::-1]  # most failed at the top
    values = [100 * t.pass_rate for t in items]
    colours = [(1 - v / 100, 0.25 + 0.5 * v / 100, 0.3) for v in values]
    rates.barh(ys, values, color=colours)
    labels = [f"{t.group}: {t.item.removeprefix('test_')}" for t in items]
    rates.set_yticks(ys, labels, fontsize=8)
    for y, t, v in zip(ys, items, values, strict=True):
        pending = f", {t.pending} to grade by hand" if t.pending else ""
        rates.text(v + 1, y, f"{t.passed}/{t.graded}{pending}", va="center", fontsize=7)
    rates.set_xlim(0, 108)
    rates.set_xlabel("pass rate (% of autograded submissions)")
    rates.set_title(f"Every {report.item_label}, most failed first")
    fig.savefig(path)


def _spread(values: list[float], step: float = 0.07) -> list[tuple[float, float]]:
    """(x offset, value) per value, equal values side by side so that every dot shows."""
    seen: dict[float, int] = {}
    total = {v: values.count(v) for v in values}
    dots = []
    for v in values:
        k = seen.get(v, 0)
        seen[v] = k + 1
        dots.append(((k - (total[v] - 1) / 2) * step, v))
    return dots
