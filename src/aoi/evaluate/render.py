"""Render report sections as Markdown (tables) or one self-contained HTML page (inline CSS, inline SVG charts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from aoi.evaluate import linecharts
from aoi.evaluate.charts import Chart, hbars

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #222; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .6rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; } th { background: #f4f4f4; }
.meta { color: #555; } .pos { color: #1a7f37; } .neg { color: #c62828; }
svg { display: block; margin: .5rem 0 1rem; } svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg .title { font-weight: 600; font-size: 12px; } svg .axis { stroke: #999; }
"""


@dataclass
class Table:
    """A table of already formatted cells."""

    headers: list[str]
    rows: list[list[str]]
    links: dict[str, str] = field(default_factory=dict)  # HTML: a cell part (", "-separated) -> the page it opens


@dataclass
class Section:
    """A report section: a heading, a sentence, tables, and charts (SVG in HTML; their text form, if given, in
    Markdown)."""

    title: str
    text: str = ""
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart | linecharts.Lines] = field(default_factory=list)
    text_charts: list[str] = field(default_factory=list)  # monospace charts, shown in Markdown as code blocks


def _md_table(table: Table) -> str:
    """Return a Markdown table."""
    rule = "|" + "|".join(["---"] + ["--:"] * (len(table.headers) - 1)) + "|"
    lines = ["| " + " | ".join(table.headers) + " |", rule]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in table.rows]
    return "\n".join(lines)


def markdown(title: str, meta: list[str], sections: list[Section]) -> str:
    """Return the report as Markdown.

    Example:
        >>> print(markdown("R", ["k=1"], [Section("S", "x", [Table(["a", "b"], [["1", "2"]])])]))
        # R
        <BLANKLINE>
        k=1
        <BLANKLINE>
        ## S
        <BLANKLINE>
        x
        <BLANKLINE>
        | a | b |
        |---|--:|
        | 1 | 2 |
        <BLANKLINE>
    """
    parts = [f"# {title}", "  \n".join(meta)]
    for section in sections:
        parts += [f"## {section.title}", *([section.text] if section.text else [])]
        parts += [_md_table(table) for table in section.tables]
        parts += [f"```\n{chart}\n```" for chart in section.text_charts]
    return "\n\n".join(parts) + "\n"


def _cell(text: str) -> str:
    """Return an HTML cell's content; a signed delta is coloured."""
    signed = text[:1] in "+-" and text[1:2].isdigit()  # a delta; a lone "-" is an empty cell
    css = "" if not signed or text == "+0.0" else "pos" if text.startswith("+") else "neg"
    return f'<span class="{css}">{escape(text)}</span>' if css else escape(text)


def _linked(text: str, links: dict[str, str]) -> str:
    """Return a cell's HTML with each of its ", "-separated parts that has a page as a link to it."""
    if not links:
        return _cell(text)
    return ", ".join(f'<a href="{escape(links[part])}">{escape(part)}</a>' if part in links else _cell(part)
                     for part in text.split(", "))


def _html_table(table: Table) -> str:
    """Return an HTML table."""
    head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
    body = "".join("<tr>" + "".join(f"<td>{_linked(c, table.links)}</td>" for c in row) + "</tr>"
                   for row in table.rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _svg(chart: Chart | linecharts.Lines) -> str:
    """Return a chart as inline SVG: bars or lines."""
    return hbars(chart) if isinstance(chart, Chart) else linecharts.svg(chart)


def html(title: str, meta: list[str], sections: list[Section]) -> str:
    """Return the report as one HTML page with no external asset.

    Example:
        >>> page = html("R", ["k=1"], [Section("S", charts=[Chart(title="c", labels=["a"], series={"s": [1.0]})])])
        >>> "<svg" in page and "http" not in page
        True
    """
    body = [f"<h1>{escape(title)}</h1>", *(f'<p class="meta">{escape(line)}</p>' for line in meta)]
    for section in sections:
        body.append(f"<h2>{escape(section.title)}</h2>")
        body += [f"<p>{escape(section.text)}</p>"] if section.text else []
        body += [_html_table(table) for table in section.tables] + [_svg(chart) for chart in section.charts]
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")
