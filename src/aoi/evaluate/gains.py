"""The gain per split: each run's success as mean ± std over its seeds, and its delta against the first run.

A run's rows carry the split part `aoi eval --split` ran ("RULE:PART"; rows without one are "no split") and the seed
of each episode (attempt a runs with base seed + a). Per split part, runs are restricted to the problems every run
that has the part holds. A seed's success rate is the mean verdict of its episodes; a run shows the mean ± population
std of those rates (the std column of the other sections is the same figure over attempts). A delta is *paired* when
both runs ran some seeds alike: per shared seed, the mean of (run - base) over the problems both ran with it, then
mean ± std over those seeds; otherwise *unpaired*: the difference of the means ± √(std_base² + std_run²).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

from aoi.evaluate.charts import Chart
from aoi.evaluate.metrics import group_by
from aoi.evaluate.render import Section, Table
from aoi.evaluate.report_tables import common_problems, problem_key

NO_SPLIT = "no split"
VERDICTS = (("avg@1", "success"), ("strict", "strict_success"))


def split_of(row: dict) -> str:
    """Return the split part a row was run on (NO_SPLIT for rows of `--problems` runs)."""
    return row.get("split") or NO_SPLIT


def seed_of(row: dict) -> int:
    """Return the seed an episode ran with (its attempt for rows that lack one)."""
    return row["seed"] if row.get("seed") is not None else row["attempt"]


def seed_rates(rows: list[dict], verdict: str = "success") -> list[float]:
    """Return each seed's success rate over the episodes run with it, in seed order.

    Example:
        Seed 0 solves 1 of 2 problems, seed 1 both.

        >>> seed_rates([{"seed": 0, "success": True}, {"seed": 0, "success": False},
        ...             {"seed": 1, "success": True}, {"seed": 1, "success": True}])
        [0.5, 1.0]
    """
    groups = group_by(rows, seed_of)
    return [statistics.fmean(bool(r.get(verdict)) for r in groups[s]) for s in sorted(groups)]


def spread(values: list[float]) -> tuple[float, float]:
    """Return (mean, population std) of the values ((0.0, 0.0) for none).

    Example:
        >>> spread([0.5, 1.0])
        (0.75, 0.25)
    """
    return (statistics.fmean(values), statistics.pstdev(values)) if values else (0.0, 0.0)


@dataclass(frozen=True)
class Delta:
    """A run's difference from the base run: mean, std, over how many seeds, and whether seeds were paired."""

    mean: float
    std: float
    seeds: int
    paired: bool


def paired_differences(base: list[dict], rows: list[dict], verdict: str = "success") -> list[float]:
    """Return, per seed both runs ran, the mean of (run - base) over the problems both ran with that seed.

    Example:
        >>> base = [{"problem_id": "p", "seed": s, "success": s == 0} for s in (0, 1)]
        >>> run = [{"problem_id": "p", "seed": s, "success": True} for s in (0, 1, 2)]
        >>> paired_differences(base, run)
        [0.0, 1.0]
    """
    verdicts = {(problem_key(r), seed_of(r)): bool(r.get(verdict)) for r in base}
    differences = defaultdict(list)
    for row in rows:
        key = (problem_key(row), seed_of(row))
        if key in verdicts:
            differences[key[1]].append(bool(row.get(verdict)) - verdicts[key])
    return [statistics.fmean(differences[s]) for s in sorted(differences)]


def delta(base: list[dict], rows: list[dict], verdict: str = "success") -> Delta:
    """Return the run's delta from the base: paired per seed when they share seeds, else unpaired.

    Example:
        >>> base = [{"problem_id": "p", "seed": s, "success": False} for s in (0, 1)]
        >>> delta(base, [{"problem_id": "p", "seed": 0, "success": True}])
        Delta(mean=1.0, std=0.0, seeds=1, paired=True)
        >>> delta(base, [{"problem_id": "p", "seed": 7, "success": True}])
        Delta(mean=1.0, std=0.0, seeds=1, paired=False)
    """
    differences = paired_differences(base, rows, verdict)
    if differences:
        return Delta(*spread(differences), len(differences), True)
    (mean_a, std_a), (mean_b, std_b) = spread(seed_rates(base, verdict)), spread(seed_rates(rows, verdict))
    seeds = min(len({seed_of(r) for r in base}), len({seed_of(r) for r in rows}))
    return Delta(mean_b - mean_a, math.hypot(std_a, std_b), seeds, False)


def format_valid(rows: list[dict], role: str = "observer") -> float | None:
    """Return the share of the role's replies that parsed, pooled over episodes (None: the rows do not record it).

    Example:
        >>> format_valid([{"replies": {"observer": {"replies": 4, "format_errors": 1}}}, {"replies": {}}])
        0.75
        >>> format_valid([{"success": True}]) is None
        True
    """
    counts = [(row.get("replies") or {}).get(role) for row in rows if "replies" in row]
    replies = sum(c["replies"] for c in counts if c)
    return 1 - sum(c["format_errors"] for c in counts if c) / replies if replies else None


def split_parts(row_sets: list[list[dict]]) -> list[str]:
    """Return the split parts any run has, in first-seen order (NO_SPLIT last).

    Example:
        >>> split_parts([[{"split": "by_target:test"}, {}], [{"split": "by_family:test"}]])
        ['by_target:test', 'by_family:test', 'no split']
    """
    parts = list(dict.fromkeys(split_of(row) for rows in row_sets for row in rows))
    return [p for p in parts if p != NO_SPLIT] + [p for p in parts if p == NO_SPLIT]


def on_split(row_sets: list[list[dict]], part: str) -> tuple[list[list[dict] | None], set]:
    """Return per run its rows of the part on the problems common to every run that has the part (None: no rows).

    Example:
        >>> a = [{"problem_id": "p", "split": "s"}, {"problem_id": "q", "split": "s"}]
        >>> b = [{"problem_id": "p", "split": "s"}]
        >>> [None if r is None else len(r) for r in on_split([a, b, []], "s")[0]]
        [1, 1, None]
    """
    parted = [[row for row in rows if split_of(row) == part] or None for rows in row_sets]
    common, _ = common_problems([rows for rows in parted if rows])
    return [rows and [r for r in rows if problem_key(r) in common] for rows in parted], common


def _pm(mean: float, std: float, seeds: int, sign: str = "") -> str:
    """Return a percentage 'mean ± std' (the mean alone over a single seed)."""
    return f"{100 * mean:{sign}.1f}" + (f" ± {100 * std:.1f}" if seeds > 1 else "")


def _basis(d: Delta) -> str:
    return f"{'paired' if d.paired else 'unpaired'}, {d.seeds} seed{'s' if d.seeds != 1 else ''}"


def _run_cells(rows: list[dict], base: list[dict] | None, first: bool) -> tuple[list[str], Delta | None]:
    """Return one run's cells on a split part (and its success delta, None for the base or without a base)."""
    seeds = len({seed_of(r) for r in rows})
    cells = [str(seeds), str(len({problem_key(r) for r in rows})), str(len(rows))]
    deltas = [None if first or base is None else delta(base, rows, verdict) for _, verdict in VERDICTS]
    for (_, verdict), d in zip(VERDICTS, deltas):
        cells += [_pm(*spread(seed_rates(rows, verdict)), seeds), "" if first else "-" if d is None else
                  _pm(d.mean, d.std, d.seeds, "+")]
    valid, valid_base = format_valid(rows), None if base is None else format_valid(base)
    shown = "" if first else "-" if valid is None or valid_base is None else f"{100 * (valid - valid_base):+.1f}"
    cells += ["-" if valid is None else f"{100 * valid:.1f}", shown]
    return cells + ["" if first else "-" if deltas[0] is None else _basis(deltas[0])], deltas[0]


def _headers(deltas: list[Delta]) -> list[str]:
    """Return the table's headers; the delta columns say whether their spread is paired per seed or unpaired."""
    kinds = {d.paired for d in deltas}
    basis = ("paired per seed" if kinds == {True} else "unpaired" if kinds == {False} else
             "paired or unpaired: see Δ basis" if kinds else "against the first run")
    figures = [c for label, _ in VERDICTS for c in (f"{label} % (mean ± std over seeds)", f"Δ {label} pp ({basis})")]
    return ["run", "seeds", "problems", "episodes", *figures, "format-valid %", "Δ format-valid pp", "Δ basis"]


SHORT = ["run", "seeds", "probs", "eps", "avg@1 %", "Δ avg@1", "strict %", "Δ strict", "fmt %", "Δ fmt", "Δ basis"]


def console_headers(headers: list[str]) -> tuple[list[str], str]:
    """Return short headers for a terminal and the caption that says what they hold (from the long headers).

    Example:
        >>> console_headers(_headers([Delta(0.1, 0.0, 2, True)]))[1].split("; ")[1]
        'Δ: pp against the first run, paired per seed'
    """
    basis = headers[5].partition("(")[2].rstrip(")")
    return SHORT, (f"avg@1, strict: % of episodes solved, mean ± std over seeds; Δ: pp against the first run, {basis}; "
                   "fmt: Observer format-valid %")


EXPLAIN = ("A seed's rate is the share of its episodes that succeeded; each run shows the mean ± population std of "
           "its seeds' rates. Paired Δ: per seed both runs ran, the mean of (run − {base}) over the problems both ran "
           "with it, then mean ± std over those seeds; unpaired Δ (no shared seed): difference of the means ± "
           "√(std² + std²). Format-valid: the share of the Observer's replies that parsed, pooled (- : not recorded).")


def split_section(names: list[str], row_sets: list[list[dict]], part: str) -> Section:
    """Return one split part's table: per run seeds, success and strict (mean ± std over seeds), format-valid, deltas.

    Example:
        >>> rows = [{"problem_id": "p", "attempt": 0, "seed": 0, "success": True, "split": "by_target:test"}]
        >>> split_section(["base"], [rows], "by_target:test").tables[0].rows
        [['base', '1', '1', '1', '100.0', '', '0.0', '', '-', '', '']]
    """
    parted, common = on_split(row_sets, part)
    cells, deltas = [], []
    for i, (name, rows) in enumerate(zip(names, parted)):
        if rows is None:
            cells.append([name, "-", "0", "0", "not run on this split", *["-"] * 6])
            continue
        row, d = _run_cells(rows, parted[0], i == 0)
        cells.append([name, *row])
        deltas += [d] if d else []
    title = f"Split {part}" if part != NO_SPLIT else "Success over seeds (no split recorded)"
    return Section(title, _note(names, parted, common) + EXPLAIN.format(base=names[0]),
                   [Table(_headers(deltas), cells)], [_chart(part, names, parted)])


def _note(names: list[str], parted: list[list[dict] | None], common: set) -> str:
    """Return what a split table covers: the common problems, the runs without rows on the part."""
    missing = [name for name, rows in zip(names, parted) if rows is None]
    note = f"{len(common)} problem{'s' if len(common) != 1 else ''} common to the runs that have this part. "
    note += f"No rows on this part: {', '.join(missing)}. " if missing else ""
    return note + ("Deltas need the first run on this part. " if parted[0] is None and len(names) > 1 else "")


def _chart(part: str, names: list[str], parted: list[list[dict] | None]) -> Chart:
    """Return bars of each run's mean success over seeds (parity and strict) on the part."""
    present = [(name, rows) for name, rows in zip(names, parted) if rows]
    return Chart(title=f"{part}: mean success over seeds by run (%)", labels=[name for name, _ in present],
                 series={label: [100 * spread(seed_rates(rows, verdict))[0] for _, rows in present]
                         for label, verdict in VERDICTS}, unit="%", max_value=100.0)


def split_sections(names: list[str], row_sets: list[list[dict]]) -> list[Section]:
    """Return one section per split part any run has (see split_section), named runs first-run first."""
    return [split_section(names, row_sets, part) for part in split_parts(row_sets)]
