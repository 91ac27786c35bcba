"""Side-by-side comparison of runs: each metric per task type and overall, with deltas against the first run."""

from __future__ import annotations

from collections.abc import Callable

from aoi.tasks import TASK_TYPES


def _pct(name: str) -> Callable[[dict], float]:
    return lambda stats: 100.0 * stats[name]


def _total(*names: str) -> Callable[[dict], float]:
    return lambda stats: sum(stats[name] for name in names)


# (label, how to read it from group_stats): success in percent, the rest as per-episode means.
METRICS: tuple[tuple[str, Callable[[dict], float]], ...] = (
    ("avg@k %", _pct("avg_at_k")), ("best@k %", _pct("best_at_k")), ("std %", _pct("std")),
    ("variance pp²", lambda stats: (100.0 * stats["std"]) ** 2),  # over attempts (the guidance ablation's measure)
    ("strict avg@k %", _pct("strict_avg_at_k")), ("strict best@k %", _pct("strict_best_at_k")),
    ("steps", _total("steps")), ("env tokens", _total("in_tokens", "out_tokens")),
    ("model tokens", _total("model_in_tokens", "model_out_tokens")))


def _groups(figures: list[dict]) -> list[str]:
    """Return overall, then every task type any run has, in AIOpsLab's order."""
    seen = {t for f in figures for t in f["by_task_type"]}
    return ["overall", *[str(t) for t in TASK_TYPES if t in seen], *sorted(seen - set(TASK_TYPES))]


def _stats(figures: dict, group: str) -> dict | None:
    return figures["overall"] if group == "overall" else figures["by_task_type"].get(group)


def compare(figures: list[dict], metrics=METRICS) -> list[dict]:
    """Return one row per (group, metric): each run's value (None: the run lacks that group) and its delta.

    `figures` are `aoi.evaluate.metrics.summarize` outputs, the base run first; a delta is run minus base.

    Example:
        >>> base = {"overall": {"avg_at_k": 0.5}, "by_task_type": {}}
        >>> other = {"overall": {"avg_at_k": 0.75}, "by_task_type": {}}
        >>> row = compare([base, other], metrics=METRICS[:1])[0]
        >>> row["group"], row["metric"], row["values"], row["deltas"]
        ('overall', 'avg@k %', [50.0, 75.0], [None, 25.0])
    """
    rows = []
    for group in _groups(figures):
        for label, read in metrics:
            values = [None if _stats(f, group) is None else read(_stats(f, group)) for f in figures]
            deltas = [None] + [None if v is None or values[0] is None else v - values[0] for v in values[1:]]
            rows.append({"group": group, "metric": label, "values": values, "deltas": deltas})
    return rows
