"""A segment's unsupported rate as a word-sized inline SVG: a line per bucket over a
shared time span (so the sparklines of a table read against each other) and the
baseline rate as a dashed line. A bucket of fewer than ``chart.FEW`` records is merged
with the next (the last with the one before), so a rate of a handful of answers never
makes the spike a reader's eye goes to. Its ``<title>`` says the figures, for screen
readers and as a tooltip; no script, no style attribute."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from html import escape

from .chart import FEW, Counts

WIDTH, HEIGHT, PAD = 120, 28, 2


def render_sparkline(
    label: str,
    buckets: Sequence[Counts],
    span: tuple[datetime, datetime],
    width: timedelta,
    baseline: float | None,
) -> str:
    """An ``<svg class="spark">`` of the buckets' rates (in time order) across ``span``
    (the first bucket's start to the last one's end over every segment shown)."""
    if not buckets:
        return '<span class="muted">no records</span>'
    points = _merged(buckets)
    rates = [bad / n for _, n, bad in points]
    # Every sparkline of a table is drawn to its own ceiling: what it shows is the
    # shape against its baseline; the figures are in the cells beside it.
    ceiling = max([*rates, baseline or 0.0, 0.01])
    t0, t1 = span[0], max(span[1], span[0] + width)

    def x(at: datetime) -> float:
        return PAD + (WIDTH - 2 * PAD) * ((at + width / 2 - t0) / (t1 - t0))

    def y(rate: float) -> float:
        return PAD + (HEIGHT - 2 * PAD) * (1 - rate / ceiling)

    line = " ".join(f"{x(at):.1f},{y(bad / n):.1f}" for at, n, bad in points)
    records = sum(b.records for b in buckets)
    bad = sum(b.unsupported for b in buckets)
    title = f"{label}: {bad} of {records} scored answers unsupported ({bad / records:.1%})"
    if baseline is not None:
        title += f", baseline {baseline:.1%}"
    out = [
        f'<svg class="spark" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    ]
    if baseline is not None:
        out.append(
            f'<line class="baseline" x1="{PAD}" x2="{WIDTH - PAD}" '
            f'y1="{y(baseline):.1f}" y2="{y(baseline):.1f}"/>'
        )
    if len(rates) == 1:
        # One bucket is a point, not a line.
        cx, cy = line.split(",")
        out.append(f'<circle class="dot" cx="{cx}" cy="{cy}" r="2"/>')
    else:
        out.append(f'<polyline class="rate" points="{line}"/>')
    out.append("</svg>")
    return "".join(out)


def _merged(buckets: Sequence[Counts]) -> list[tuple[datetime, int, int]]:
    """(start, records, unsupported) per point: the buckets in order, each of fewer than
    ``FEW`` records joined to the next until they reach it, a short tail to the point
    before; a merged point stands at the middle of the buckets it holds."""
    groups: list[list[Counts]] = []
    open_group: list[Counts] = []
    for bucket in buckets:
        if not bucket.records:
            continue
        open_group.append(bucket)
        if sum(b.records for b in open_group) >= FEW:
            groups.append(open_group)
            open_group = []
    if open_group:
        if groups:
            groups[-1].extend(open_group)
        else:
            groups.append(open_group)
    return [
        (
            group[0].start + (group[-1].start - group[0].start) / 2,
            sum(b.records for b in group),
            sum(b.unsupported for b in group),
        )
        for group in groups
    ]
