"""Traces: which services fail requests and which are outliers in latency (from the file reader's aggregate)."""

from __future__ import annotations

from statistics import median

from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.analyzers.table import words

SLOW_FACTOR = 20  # a service whose mean span is this many times the typical service's is the latency outlier


def services(aggregate: str) -> list[dict]:
    """Return per-service rows of `read_file(path, op="aggregate", by="service_name")` as numbers.

    Example:
        >>> t = "f.csv: 3 rows\\nservice_name  rows  mean_duration  max_duration  errors\\nweb  3  900.0  1200.0  1\\n"
        >>> services(t)
        [{'service': 'web', 'rows': 3, 'mean': 900.0, 'max': 1200.0, 'errors': 1}]
    """
    out = []
    for r in words(aggregate, ("service_name",)):
        try:
            out.append({"service": r["service_name"], "rows": int(r.get("rows", 0)),
                        "mean": float(r.get("mean_duration", 0)), "max": float(r.get("max_duration", 0)),
                        "errors": int(r.get("errors", 0) or 0)})
        except ValueError:
            continue
    return out


def analyze(aggregate: str) -> list[Evidence]:
    """Find services with failed spans and services whose latency stands out.

    Example:
        >>> t = ("f.csv: 9 rows\\nservice_name  rows  mean_duration  max_duration  errors\\n"
        ...      "web  3  2000.0  3000.0  0\\napi  3  900000.0  2000000.0  0\\ndb  3  1500.0  2000.0  2\\n")
        >>> [(e.kind, e.component) for e in analyze(t)]
        [('trace_errors', 'db'), ('slow_service', 'api')]
    """
    table = services(aggregate)
    found = [Evidence("trace_errors", s["service"], f"{s['errors']} of {s['rows']} spans of {s['service']} failed",
                      {"errors": s["errors"], "rows": s["rows"]}) for s in table if s["errors"]]
    typical = median([s["mean"] for s in table]) if table else 0
    slow = [s for s in table if typical and s["mean"] >= SLOW_FACTOR * typical]
    slow.sort(key=lambda s: -s["mean"])
    found += [Evidence("slow_service", s["service"], f"{s['service']} spans take {s['mean'] / 1000:.0f} ms on "
                       f"average (typical service: {typical / 1000:.1f} ms)", {"mean": s["mean"], "max": s["max"]})
              for s in slow[:2]]
    return found


def most_failing(evidence: list[Evidence]) -> str | None:
    """Return the service with the most failed spans (ties: the one with fewer spans, deeper in the call graph).

    Example:
        >>> most_failing([Evidence("trace_errors", "web", "", {"errors": 4, "rows": 90}),
        ...               Evidence("trace_errors", "api", "", {"errors": 8, "rows": 40})])
        'api'
    """
    failing = [e for e in evidence if e.kind == "trace_errors"]
    if not failing:
        return None
    return min(failing, key=lambda e: (-e.facts["errors"], e.facts["rows"])).component
