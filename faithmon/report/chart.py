"""One segment's unsupported rate over time as an inline SVG string (no scripts, no fonts).

The chart draws, in trace time: the rate per bucket (dots with a thin 95% interval,
joined by a line that is dotted across buckets without records), the baseline rate
inside a band of its 95% interval, and a vertical marker per alert event (change
point, opened, resolved). A bucket of fewer than ``FEW`` records is drawn hollow and
joined by a dotted line, and the axis is scaled without it: one answer in a bucket is a
rate of 0% or 100%, which says little and must not draw the eye or flatten the rest.
Each element carries a ``<title>``, which browsers show as a tooltip without any script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Literal, Protocol

from ..drift import wilson_interval

WIDTH, HEIGHT = 820, 300
LEFT, RIGHT, TOP, BOTTOM = 60, 28, 58, 52
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
CHAR_W = 6.6  # advance of an average bold 11px sans-serif character, to keep labels apart
LABEL_ROWS = 3
# (ceiling of the y axis, step between its gridlines)
Y_SCALES = (
    *((0.05, 0.01), (0.1, 0.02), (0.2, 0.05), (0.3, 0.1), (0.4, 0.1), (0.5, 0.1)),
    *((0.6, 0.2), (0.8, 0.2), (1.0, 0.2)),
)
TICK_STEPS = tuple(
    timedelta(seconds=s)
    for s in (
        *(0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30),
        *(60 * m for m in (1, 2, 5, 10, 15, 30)),
        *(3600 * h for h in (1, 2, 3, 6, 12)),
        *(86400 * d for d in (1, 2, 7, 14, 28)),
    )
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
FEW = 10
"""A bucket of fewer scored records than this has a rate too unsure to weigh as the
others: drawn hollow here, merged with its neighbours in a sparkline."""

MarkerKind = Literal["change point", "opened", "resolved"]


class Counts(Protocol):
    """A bucket of records: its start and how many were scored and unsupported."""

    @property
    def start(self) -> datetime: ...

    @property
    def records(self) -> int: ...

    @property
    def unsupported(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Band:
    rate: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Marker:
    at: datetime
    rule: str
    state: str
    """Also the CSS class of its colour: firing, pending, resolved."""
    kind: MarkerKind


@dataclass(frozen=True, slots=True)
class _Frame:
    t0: datetime
    t1: datetime
    ceiling: float

    def x(self, at: datetime) -> float:
        return LEFT + PLOT_W * ((at - self.t0) / (self.t1 - self.t0))

    def y(self, rate: float) -> float:
        return TOP + PLOT_H * (1 - min(rate, self.ceiling) / self.ceiling)


def duration(width: timedelta) -> str:
    seconds = width.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


def render_chart(
    chart_id: str,
    title: str,
    buckets: Sequence[Counts],
    width: timedelta,
    band: Band | None,
    markers: Sequence[Marker] = (),
) -> str:
    """An ``<svg>`` of the buckets' unsupported rate (buckets in time order)."""
    if not buckets:
        return f'<p class="empty" id="{escape(chart_id)}">No scored records yet.</p>'
    # The axis holds the rates and intervals of buckets big enough to matter; a bucket of
    # a few records (when there are others) is cut at the top rather than squeezing the
    # baseline band flat, and its tooltip says its figures.
    weighty = [b for b in buckets if b.records >= FEW] or [b for b in buckets if b.records]
    top = max(
        [band.high if band else 0.0]
        + [b.unsupported / b.records for b in weighty]
        + [wilson_interval(b.unsupported, b.records)[1] for b in weighty if b.records >= FEW]
    )
    ceiling = next((c for c, _ in Y_SCALES if c >= top), 1.0)
    frame = _Frame(buckets[0].start, buckets[-1].start + width, ceiling)
    cid = escape(chart_id)
    out = [
        f'<svg class="chart" id="{cid}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="{cid}-t" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{cid}-t">{escape(title)}</title>',
        *_axes(frame, width),
    ]
    if band is not None:
        high, low, mid = frame.y(band.high), frame.y(band.low), frame.y(band.rate)
        out += [
            f'<rect class="band" x="{LEFT}" y="{high:.1f}" width="{PLOT_W}" '
            f'height="{max(low - high, 1):.1f}"><title>baseline 95% interval '
            f"{band.low:.1%}–{band.high:.1%}</title></rect>",
            f'<line class="baseline" x1="{LEFT}" x2="{LEFT + PLOT_W}" y1="{mid:.1f}" '
            f'y2="{mid:.1f}"><title>baseline {band.rate:.1%}</title></line>',
        ]
    out += _series(frame, buckets, width)
    out += _markers(frame, markers)
    out.append("</svg>")
    return "\n".join(out)


def _time_label(at: datetime, step: timedelta, frame: _Frame) -> str:
    if step < timedelta(seconds=1):
        return at.strftime("%H:%M:%S.") + str(at.microsecond // 100_000)
    if step < timedelta(minutes=1):
        return at.strftime("%H:%M:%S")
    if step < timedelta(days=1):
        one_day = frame.t0.date() == frame.t1.date()
        return at.strftime("%H:%M" if one_day else "%m-%d %H:%M")
    return at.strftime("%Y-%m-%d")


def _axes(frame: _Frame, width: timedelta) -> list[str]:
    out = ['<g class="axes">']
    step = dict(Y_SCALES).get(frame.ceiling, 0.2)
    for i in range(round(frame.ceiling / step) + 1):
        y = frame.y(i * step)
        out.append(
            f'<line class="grid" x1="{LEFT}" x2="{LEFT + PLOT_W}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">'
            f"{i * step:.0%}</text>"
        )
    span = frame.t1 - frame.t0
    tick = next((s for s in TICK_STEPS if s * 6 >= span), TICK_STEPS[-1])
    at = EPOCH + tick * -((EPOCH - frame.t0) // tick)  # the first multiple of tick ≥ t0
    while at <= frame.t1:
        x = frame.x(at)
        anchor = "end" if x > WIDTH - RIGHT - 20 else "middle"
        out.append(
            f'<line class="tickmark" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP + PLOT_H}" '
            f'y2="{TOP + PLOT_H + 5}"/><text class="tick" x="{x:.1f}" y="{TOP + PLOT_H + 18}" '
            f'text-anchor="{anchor}">{escape(_time_label(at, tick, frame))}</text>'
        )
        at += tick
    day = f", {frame.t0:%Y-%m-%d}" if frame.t0.date() == frame.t1.date() else ""
    out += [
        f'<line class="axis" x1="{LEFT}" x2="{LEFT + PLOT_W}" y1="{TOP + PLOT_H}" '
        f'y2="{TOP + PLOT_H}"/>',
        f'<text class="axis-title" x="{LEFT + PLOT_W / 2}" y="{HEIGHT - 10}" '
        f'text-anchor="middle">trace start time (UTC{day}) · one point per '
        f"{duration(width)}</text>",
        f'<text class="axis-title" transform="translate(16 {TOP + PLOT_H / 2}) rotate(-90)" '
        'text-anchor="middle">unsupported rate</text>',
        "</g>",
    ]
    return out


def _series(frame: _Frame, buckets: Sequence[Counts], width: timedelta) -> list[str]:
    points: list[tuple[datetime, float, float, bool]] = []
    dots = []
    for bucket in buckets:
        if not bucket.records:
            continue
        rate = bucket.unsupported / bucket.records
        low, high = wilson_interval(bucket.unsupported, bucket.records)
        cx, cy = frame.x(bucket.start + width / 2), frame.y(rate)
        few = bucket.records < FEW
        points.append((bucket.start, cx, cy, few))
        tip = (
            f"{bucket.start:%Y-%m-%d %H:%M:%S} UTC, {duration(width)}: {bucket.unsupported} of "
            f"{bucket.records} answers unsupported ({rate:.1%}; 95% {low:.1%}–{high:.1%})"
            + (f"; fewer than {FEW} answers, a rough figure" if few else "")
        )
        kind = " few" if few else ""
        dots.append(
            f'<line class="ci{kind}" x1="{cx:.1f}" x2="{cx:.1f}" y1="{frame.y(low):.1f}" '
            f'y2="{frame.y(high):.1f}"/><circle class="dot{kind}" cx="{cx:.1f}" '
            f'cy="{cy:.1f}" r="3.5"><title>{escape(tip)}</title></circle>'
        )
    runs: list[list[tuple[float, float]]] = []
    gaps = []
    for i, (start, cx, cy, few) in enumerate(points):
        before = points[i - 1] if i else None
        if before is not None and (start - before[0] > width or few or before[3]):
            # Across buckets without records, or to one of a few: joined, but dotted, to
            # show the trend without lending the rough point the solid line's weight.
            _, px, py, _ = before
            gaps.append(
                f'<line class="gap" x1="{px:.1f}" y1="{py:.1f}" x2="{cx:.1f}" y2="{cy:.1f}"/>'
            )
            runs.append([])
        elif not runs:
            runs.append([])
        runs[-1].append((cx, cy))
    lines = [
        '<polyline class="rate" points="' + " ".join(f"{a:.1f},{b:.1f}" for a, b in run) + '"/>'
        for run in runs
        if len(run) > 1
    ]
    return ['<g class="series">', *gaps, *lines, *dots, "</g>"]


def _markers(frame: _Frame, markers: Sequence[Marker]) -> list[str]:
    # Markers of several rules at one pixel (one detector run) share a line and a label.
    groups: dict[tuple[int, str, str], list[Marker]] = {}
    for marker in sorted(markers, key=lambda m: (m.at, m.rule)):
        if frame.t0 <= marker.at <= frame.t1:
            key = (round(frame.x(marker.at)), marker.kind, marker.state)
            groups.setdefault(key, []).append(marker)
    out = []
    rows: list[list[tuple[float, float]]] = [[] for _ in range(LABEL_ROWS)]
    for (mx, kind, state), group in sorted(groups.items()):
        rules = ", ".join(dict.fromkeys(m.rule for m in group))
        label = f"{rules} ({state}) · {kind}"
        text_w = CHAR_W * len(label)
        anchor = "end" if mx + 4 + text_w > WIDTH - 4 else "start"
        left = mx - 4 - text_w if anchor == "end" else mx + 4
        row = next((i for i, used in enumerate(rows) if _fits(left, text_w, used)), None)
        dash = "" if kind == "change point" else ' stroke-dasharray="5 4"'
        when = ", ".join(f"{m.rule} {m.at:%Y-%m-%d %H:%M:%S} UTC" for m in group)
        text = ""
        top = TOP
        if row is not None:
            # No room on any row: the line stays, the tooltip still names it.
            rows[row].append((left, left + text_w))
            top = 16 + 15 * row
            text_x = mx - 4 if anchor == "end" else mx + 4
            text = f'<text x="{text_x:.1f}" y="{top}" text-anchor="{anchor}">{escape(label)}</text>'
        out.append(
            f'<g class="marker {escape(state)}"><title>{escape(label)}: {escape(when)}</title>'
            f'<line x1="{mx}" x2="{mx}" y1="{top - 10 if text else TOP}" y2="{TOP + PLOT_H}"'
            f"{dash}/>{text}</g>"
        )
    return out


def _fits(left: float, width: float, used: Sequence[tuple[float, float]]) -> bool:
    return all(left > b + 8 or left + width < a - 8 for a, b in used)
