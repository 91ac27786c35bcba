"""Metrics: pods whose CPU use or dropped packets stand out (from the file reader's aggregate by pod)."""

from __future__ import annotations

from statistics import median

from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.analyzers.table import owner, words

HOT_FACTOR = 10  # CPU seconds used in the window, against the typical pod's
HOT_FLOOR = 30.0


def per_pod(aggregate: str) -> list[tuple[str, float, float]]:
    """Return (pod, min, max) per series of `read_file(kpi_*.csv, op="summary")`; cmdb_id ends with the pod name.

    Example:
        >>> per_pod("k.csv: 2 rows\\ncmdb_id  rows  min_value  mean_value  max_value\\n"
        ...         "svc:443.web-1  2  1.0  2.0  3.0\\n")
        [('web-1', 1.0, 3.0)]
    """
    out = []
    for r in words(aggregate, ("cmdb_id",)):
        try:
            out.append((r["cmdb_id"].rsplit(".", 1)[-1], float(r.get("min_value", 0)), float(r.get("max_value", 0))))
        except ValueError:
            continue
    return out


def cpu(aggregate: str) -> list[Evidence]:
    """Find pods that used far more CPU than the others (container_cpu_usage_seconds_total is a counter).

    Example:
        >>> t = ("k.csv\\ncmdb_id  rows  min_value  mean_value  max_value\\n"
        ...      "a.web-1  2  1.0  2.0  3.0\\na.db-1  2  1.0  2.0  4.0\\na.api-1  2  10.0  90.0  200.0\\n")
        >>> [(e.kind, e.component) for e in cpu(t)]
        [('cpu_hot', 'api')]
    """
    used = [(pod, high - low) for pod, low, high in per_pod(aggregate)]
    typical = median([u for _, u in used]) if used else 0
    return [Evidence("cpu_hot", owner(pod), f"pod {pod} used {u:.0f} CPU-seconds in the window (typical pod: "
                     f"{typical:.1f})", {"pod": pod, "cpu_seconds": round(u, 1)})
            for pod, u in used if u >= HOT_FLOOR and u >= HOT_FACTOR * max(typical, 0.1)]


def drops(aggregate: str) -> list[Evidence]:
    """Find pods whose dropped-packet counters grew.

    Example:
        >>> [e.component for e in drops("k.csv\\ncmdb_id  rows  min_value  mean_value  max_value\\n"
        ...                             "a.web-1  2  0.0  5.0  9.0\\n")]
        ['web']
    """
    return [Evidence("packet_drops", owner(pod), f"pod {pod} dropped {high - low:.0f} packets in the window",
                     {"pod": pod}) for pod, low, high in per_pod(aggregate) if high > low]
