"""Inline SVG charts for the HTML report: grouped horizontal bars, no dependency, no external asset."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")
BAR, GAP, TOP, CHAR = 14, 10, 44, 6.6  # bar height, gap between groups, space above the bars, px per label char


@dataclass(kw_only=True)
class Chart:
    """Grouped bars: one group per label, one bar per series; `unit` is appended to value labels."""

    title: str
    labels: list[str]
    series: dict[str, list[float]]
    unit: str = ""
    max_value: float | None = None  # the axis end (None: the largest value)
    digits: int = 1
    notes: list[str] = field(default_factory=list)


def _value(value: float, chart: Chart) -> str:
    """Format a bar's value label."""
    return f"{value:.{chart.digits}f}{chart.unit}"


def _legend(chart: Chart, left: float) -> list[str]:
    """Return the legend items (colour box + series name) on one line under the title."""
    items, x = [], left
    for i, name in enumerate(chart.series):
        colour = PALETTE[i % len(PALETTE)]
        items.append(f'<rect x="{x:.0f}" y="24" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{x + 14:.0f}" y="33" class="legend">{escape(name)}</text>')
        x += 24 + CHAR * len(name)
    return items


def _group(chart: Chart, index: int, y: float, left: float, span: float, top: float) -> list[str]:
    """Return one label's bars (one per series) and its label."""
    n = len(chart.series)
    parts = [(f'<text x="{left - 6:.0f}" y="{y + n * BAR / 2 + 4:.0f}" text-anchor="end" class="label">'
              f'{escape(chart.labels[index])}</text>')]
    for i, (name, values) in enumerate(chart.series.items()):
        value = values[index] if index < len(values) else 0.0
        width = span * max(value, 0.0) / top if top else 0.0
        by = y + i * BAR
        parts.append(f'<rect x="{left:.0f}" y="{by:.0f}" width="{width:.1f}" height="{BAR - 2}" '
                     f'fill="{PALETTE[i % len(PALETTE)]}"><title>{escape(name)}: {_value(value, chart)}</title></rect>'
                     f'<text x="{left + width + 4:.1f}" y="{by + BAR - 4:.0f}" class="value">'
                     f'{_value(value, chart)}</text>')
    return parts


def hbars(chart: Chart, width: int = 720) -> str:
    """Return the chart as an inline <svg> element.

    Example:
        >>> svg = hbars(Chart(title="Success", labels=["detection", "mitigation"], series={"avg@k": [90.0, 40.0]},
        ...                   unit="%"))
        >>> svg.startswith("<svg") and "90.0%" in svg and "http" not in svg
        True
    """
    left = min(260.0, 12 + CHAR * max((len(label) for label in chart.labels), default=4))
    span = width - left - 70
    peak = max((v for values in chart.series.values() for v in values), default=0.0)
    top = chart.max_value or peak or 1.0
    step = len(chart.series) * BAR + GAP
    height = TOP + step * len(chart.labels) + 8
    # No xmlns: HTML5 parses inline <svg> without it, and the page then names no URL at all.
    parts = [(f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">'
              f'<title>{escape(chart.title)}</title>'),
             f'<text x="{left:.0f}" y="15" class="title">{escape(chart.title)}</text>', *_legend(chart, left),
             f'<line x1="{left:.0f}" y1="{TOP - 4}" x2="{left:.0f}" y2="{height - 6}" class="axis"/>']
    for index in range(len(chart.labels)):
        parts += _group(chart, index, TOP + index * step, left, span, top)
    return "".join(parts) + "</svg>"
