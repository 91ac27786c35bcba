"""The run summary: metrics over every row of results.jsonl, the sessions that produced them, the printed table."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich import box
from rich.table import Table

from aoi.evaluate.baseline import baseline
from aoi.evaluate.failures import issue_totals
from aoi.evaluate.metrics import summarize


@dataclass(kw_only=True)
class Summary:
    """What a run achieved so far; `summary.json` is `to_dict()`.

    `sessions` lists each invocation of the run (a resumed run has several): started_at, wall_seconds, episodes
    finished, episodes that could not run, episodes abandoned in flight (SIGTERM, a second Ctrl-C), and whether it
    was interrupted. `pending` counts the selected episodes still missing. `baseline` is the constant-answer baseline
    of the run's problems per task type (aoi.evaluate.baseline); the figures count forced submits and the successes
    that came from one (`forced_submits`, `forced_successes`).
    """

    run: dict
    overall: dict
    by_task_type: dict
    by_family: dict
    issues: dict
    baseline: dict = field(default_factory=dict)
    sessions: list[dict] = field(default_factory=list)
    pending: int = 0

    @property
    def interrupted(self) -> bool:
        """Return whether the last session stopped before its work was done."""
        return bool(self.sessions and self.sessions[-1].get("interrupted"))

    @property
    def wall_seconds(self) -> float:
        """Return the wall time of every session together."""
        return sum(s.get("wall_seconds", 0.0) for s in self.sessions)

    @property
    def episodes_per_hour(self) -> float:
        """Return the throughput of every session together (episodes finished per wall-clock hour)."""
        episodes = sum(s.get("episodes", 0) for s in self.sessions)
        return episodes * 3600.0 / self.wall_seconds if self.wall_seconds else 0.0

    def to_dict(self) -> dict:
        """Return the summary as JSON-ready data, throughput included."""
        return asdict(self) | {"wall_seconds": round(self.wall_seconds, 3),
                               "episodes_per_hour": round(self.episodes_per_hour, 2)}


def build_summary(rows: list[dict], run: dict, sessions: list[dict], pending: int = 0) -> Summary:
    """Compute the summary of a run's rows.

    Example:
        >>> rows = [{"problem_id": "p", "task_type": "detection", "family": "f", "attempt": 0, "success": True}]
        >>> build_summary(rows, {"model": "expert"}, []).overall["best_at_k"]
        1.0
    """
    figures = summarize(rows)
    return Summary(run=run, overall=figures["overall"], by_task_type=figures["by_task_type"],
                   by_family=figures["by_family"], issues=issue_totals(rows), baseline=baseline(rows),
                   sessions=sessions, pending=pending)


def write_summary(summary: Summary, path: str | Path) -> None:
    """Write summary.json atomically (a reader never sees half a file)."""
    path = Path(path)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_sessions(path: str | Path) -> list[dict]:
    """Return the sessions recorded in an existing summary.json (none when it is missing or unreadable)."""
    try:
        return list(json.loads(Path(path).read_text(encoding="utf-8")).get("sessions") or [])
    except (OSError, ValueError, AttributeError):
        return []


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _si(value: float) -> str:
    """Return a count in at most four characters: 950, 1.2k, 457k, 1.2M, 12M.

    Example:
        >>> [_si(v) for v in (950, 1234, 456_789, 1_234_567, 12_345_678)]
        ['950', '1.2k', '457k', '1.2M', '12M']
    """
    if value < 999.5:
        return f"{value:.0f}"
    for unit, scale in (("k", 1e3), ("M", 1e6)):
        shown = value / scale
        if shown < 999.5:
            return f"{shown:.1f}{unit}" if shown < 9.95 else f"{shown:.0f}{unit}"
    return f"{value / 1e9:.0f}G"


WIDE_COLUMNS = ("task type", "problems", "episodes", "avg@k%", "best@k%", "std%", "strict avg%", "strict best%",
                "forced ok", "const%", "TTx s", "env steps", "env tokens in/out", "model tokens in/out", "wall s")
# Under NARROW columns: two-line headers, counts and strict figures paired, token counts in k/M, no TTx, env steps, env
# tokens or wall time (summary.json and the report have them).
NARROW = 150
NARROW_COLUMNS = ("task type", "problems\n/eps", "avg@k\n%", "best@k\n%", "std\n%", "strict %\navg/best",
                  "forced\nok", "const\n%", "model tok\nin/out")
CAPTION = ("forced ok: successes from a submit the limits forced (iterations or env steps ran out); const: the "
           "constant-answer baseline's success on the same problems (n/a: none, as for mitigation)")
HIDDEN = "; not shown at this width: TTx s, env steps, env tokens, wall s ({need}+ columns, summary.json or the report)"


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _rate(value: float | None) -> str:
    return "n/a" if value is None else _pct(value)


def _cells(s: dict, const: dict, narrow: bool) -> list[str]:
    """Return one group's cells for the wide or the narrow table (`const`: the group's baseline)."""
    judged = [_count(s.get("forced_successes")), _rate(const.get("success"))]
    if narrow:
        return [f"{s['problems']}/{s['episodes']}", _pct(s["avg_at_k"]), _pct(s["best_at_k"]), _pct(s["std"]),
                f"{_pct(s['strict_avg_at_k'])}/{_pct(s['strict_best_at_k'])}", *judged,
                f"{_si(s['model_in_tokens'])}/{_si(s['model_out_tokens'])}"]
    return [str(s["problems"]), str(s["episodes"]), _pct(s["avg_at_k"]), _pct(s["best_at_k"]), _pct(s["std"]),
            _pct(s["strict_avg_at_k"]), _pct(s["strict_best_at_k"]), *judged, f"{s['ttx']:.0f}", f"{s['steps']:.1f}",
            f"{s['in_tokens']:.0f}/{s['out_tokens']:.0f}", f"{s['model_in_tokens']:.0f}/{s['model_out_tokens']:.0f}",
            f"{s['seconds']:.1f}"]


def summary_table(summary: Summary, title: str = "aoi eval", width: int | None = None) -> Table:
    """Return the per-task-type table (rows: task types and overall; success figures in percent).

    `width` is the console's: where the full table does not fit, the compact one (which fits 80 columns), its
    caption saying which columns it leaves out and how wide a terminal shows them.
    """
    wide = _table(summary, title, narrow=False)
    need = natural_width(wide)
    if width is None or width >= need:
        return wide
    return _table(summary, title, narrow=True, caption=CAPTION + HIDDEN.format(need=need))


def natural_width(table: Table) -> int:
    """Return the columns a table takes unfolded and uncut."""
    from rich.console import Console
    from rich.measure import Measurement

    console = Console(width=10_000)
    return Measurement.get(console, console.options, table).maximum


def _table(summary: Summary, title: str, narrow: bool, caption: str = CAPTION) -> Table:
    """Return the wide or the narrow table of a summary."""
    table = Table(title=title, caption=caption, box=None if narrow else box.HEAVY_HEAD, pad_edge=not narrow,
                  header_style="bold", caption_justify="left")
    for name in NARROW_COLUMNS if narrow else WIDE_COLUMNS:
        table.add_column(name, justify="left" if name == "task type" else "right", no_wrap=True)
    for name, s in [*summary.by_task_type.items(), ("overall", summary.overall)]:
        table.add_row(name, *_cells(s, summary.baseline.get(name, {}), narrow),
                      style="bold" if name == "overall" else None)
    return table
