"""Line charts of series over a numeric x (reward by step, by wall-clock): inline SVG for HTML, text for Markdown."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

from aoi.evaluate.charts import CHAR, PALETTE

MARKS = "*o+x#@%&"  # one per series in text charts
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 44, 40  # SVG margins around the plot area


@dataclass(kw_only=True)
class Lines:
    """Series of (x, y) points, x ascending, drawn on shared axes."""

    title: str
    series: dict[str, list[tuple[float, float]]]
    x_label: str
    y_label: str = ""
    x_min: float | None = None  # where the x axis starts (None: the smallest x), e.g. 0 for seconds since a start


def bounds(lines: Lines) -> tuple[float, float, float, float]:
    """Return (x0, x1, y0, y1) over every point, widened where flat so that nothing divides by zero.

    Example:
        >>> bounds(Lines(title="t", series={"a": [(1, 2.0), (3, 2.0)]}, x_label="step"))
        (1, 3, 1.5, 2.5)
    """
    xs = [x for points in lines.series.values() for x, _ in points] or [0.0]
    ys = [y for points in lines.series.values() for _, y in points] or [0.0]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    x0 = x0 if lines.x_min is None else min(x0, lines.x_min)
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y0, y1 = y0 - 0.5, y1 + 0.5
    return x0, x1, y0, y1


def _number(value: float) -> str:
    """Format an axis value: integers plainly, others with two significant decimals."""
    return f"{value:.0f}" if float(value).is_integer() or abs(value) >= 100 else f"{value:.2f}"


def svg(lines: Lines, width: int = 720, height: int = 280) -> str:
    """Return the chart as an inline <svg> element: one polyline per series, the x and y ranges on the axes.

    Example:
        >>> page = svg(Lines(title="Reward", series={"a": [(1, 0.5), (2, 1.0)]}, x_label="step"))
        >>> page.startswith("<svg") and "<polyline" in page and "http" not in page
        True
    """
    x0, x1, y0, y1 = bounds(lines)
    span_x, span_y = width - LEFT - RIGHT, height - TOP - BOTTOM

    def at(x: float, y: float) -> str:
        return f"{LEFT + span_x * (x - x0) / (x1 - x0):.1f},{TOP + span_y * (y1 - y) / (y1 - y0):.1f}"

    bottom, right = TOP + span_y, LEFT + span_x
    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">'
             f"<title>{escape(lines.title)}</title>",
             f'<text x="{LEFT}" y="15" class="title">{escape(lines.title)}</text>', *_legend(lines),
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" class="axis"/>'
             f'<line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" class="axis"/>',
             f'<text x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">{_number(y1)}</text>'
             f'<text x="{LEFT - 6}" y="{bottom}" text-anchor="end">{_number(y0)}</text>'
             f'<text x="{LEFT}" y="{bottom + 16}">{_number(x0)}</text>'
             f'<text x="{right}" y="{bottom + 16}" text-anchor="end">{_number(x1)}</text>'
             f'<text x="{LEFT + span_x / 2:.0f}" y="{bottom + 32}" text-anchor="middle">{escape(lines.x_label)}</text>']
    for i, (name, points) in enumerate(lines.series.items()):
        colour = PALETTE[i % len(PALETTE)]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                     f'points="{" ".join(at(x, y) for x, y in points)}"/>')
        parts += [f'<circle cx="{at(x, y).split(",")[0]}" cy="{at(x, y).split(",")[1]}" r="2.5" fill="{colour}">'
                  f"<title>{escape(name)}: {_number(x)}, {y:.3f}</title></circle>" for x, y in points]
    return "".join(parts) + "</svg>"


def _legend(lines: Lines) -> list[str]:
    """Return the legend items (colour box + series name) on one line under the title."""
    items, x = [], float(LEFT)
    for i, name in enumerate(lines.series):
        items.append(f'<rect x="{x:.0f}" y="24" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>'
                     f'<text x="{x + 14:.0f}" y="33" class="legend">{escape(name)}</text>')
        x += 24 + CHAR * len(name)
    return items


def text(lines: Lines, width: int = 60, height: int = 12) -> str:
    """Return the chart as monospace text: one mark per series, the y range on the left, the x range below.

    Example:
        >>> print(text(Lines(title="Reward", series={"a": [(0, 0.25), (1, 1.5)]}, x_label="step"), width=8,
        ...            height=3))
        Reward
        1.50 |       *
             |
        0.25 |*
             +--------
              0      1  step
        * a
    """
    x0, x1, y0, y1 = bounds(lines)
    grid = [[" "] * width for _ in range(height)]
    for i, points in enumerate(lines.series.values()):
        for x, y in points:
            column = round((width - 1) * (x - x0) / (x1 - x0))
            row = round((height - 1) * (y1 - y) / (y1 - y0))
            grid[row][column] = MARKS[i % len(MARKS)]
    top, low = _number(y1), _number(y0)
    pad = max(len(top), len(low))
    rows = [f"{(top if r == 0 else low if r == height - 1 else ''):>{pad}} |{''.join(cells)}".rstrip()
            for r, cells in enumerate(grid)]
    left, right = _number(x0), _number(x1)
    axis = f"{' ' * pad} +{'-' * width}"
    scale = f"{' ' * pad}  {left}{right:>{max(width - len(left), len(right))}}  {lines.x_label}"
    legend = "   ".join(f"{MARKS[i % len(MARKS)]} {name}" for i, name in enumerate(lines.series))
    return "\n".join([lines.title, *rows, axis, scale, legend])


def png(charts: list[Lines], path: str | Path, width: int = 720, height: int = 280) -> Path:
    """Write charts stacked top to bottom as one PNG file (Pillow, which tensorboard brings); return its path.

    Example:
        >>> import tempfile
        >>> out = png([Lines(title="Reward", series={"a": [(1, 0.5), (2, 1.0)]}, x_label="step")],
        ...           Path(tempfile.mkdtemp()) / "c.png")
        >>> out.read_bytes()[:4]
        b'\\x89PNG'
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:
        raise ValueError("a PNG chart needs Pillow: pip install 'aoi[train]' (tensorboard brings it)") from exc
    image = Image.new("RGB", (width, height * len(charts)), "white")
    draw = ImageDraw.Draw(image)
    for index, lines in enumerate(charts):
        _png_panel(draw, lines, index * height, width, height)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")
    return path


def _png_panel(draw, lines: Lines, top: int, width: int, height: int) -> None:
    """Draw one chart into the band of the image that starts at `top`."""
    x0, x1, y0, y1 = bounds(lines)
    span_x, span_y = width - LEFT - RIGHT, height - TOP - BOTTOM
    bottom, right = top + TOP + span_y, LEFT + span_x

    def at(x: float, y: float) -> tuple[float, float]:
        return LEFT + span_x * (x - x0) / (x1 - x0), top + TOP + span_y * (y1 - y) / (y1 - y0)

    draw.text((LEFT, top + 4), lines.title, fill="black")
    draw.line([(LEFT, top + TOP), (LEFT, bottom), (right, bottom)], fill="#555555", width=1)
    draw.text((4, top + TOP), _number(y1), fill="black")
    draw.text((4, bottom - 10), _number(y0), fill="black")
    draw.text((LEFT, bottom + 4), _number(x0), fill="black")
    draw.text((right - 6 * len(_number(x1)), bottom + 4), _number(x1), fill="black")
    draw.text((LEFT + span_x // 2 - 3 * len(lines.x_label), bottom + 20), lines.x_label, fill="black")
    legend_x = LEFT
    for i, (name, points) in enumerate(lines.series.items()):
        colour = PALETTE[i % len(PALETTE)]
        draw.rectangle([legend_x, top + 22, legend_x + 9, top + 31], fill=colour)
        draw.text((legend_x + 14, top + 21), name, fill="black")
        legend_x += 24 + 6 * len(name)
        marks = [at(x, y) for x, y in points]
        if len(marks) > 1:
            draw.line(marks, fill=colour, width=2)
        for cx, cy in marks:
            draw.ellipse([cx - 3, cy - 3, cx + 3, cy + 3], fill=colour)
