"""Export a real cluster's telemetry in AIOpsLab's CSV formats: Prometheus metrics and Jaeger traces over HTTP.

Formats (reference/aiopslab.md 5.1-5.2): one `container/kpi_<metric>.csv` per metric with data, columns
`timestamp,cmdb_id,kpi_name,value` (cmdb_id = <instance>.<pod>, network metrics suffixed .<interface>); one traces
CSV with TRACE_COLUMNS, parent ROOT for root spans, times in microseconds.
"""

from __future__ import annotations

import csv
from pathlib import Path

import httpx

from aoi.twin.behaviour.metrics import CPU_METRICS, MEMORY_METRICS, NETWORK_METRICS, SPEC_METRICS, STEP
from aoi.twin.behaviour.telemetry import TRACE_COLUMNS

METRICS = CPU_METRICS + MEMORY_METRICS + SPEC_METRICS + NETWORK_METRICS
SKIPPED_PODS = ("loadgenerator-", "redis-cart")  # AIOpsLab leaves these out of the export
SKIPPED_SERVICES = ("jaeger-all-in-one", "jaeger-query")
TIMEOUT = 30.0


class TelemetryError(RuntimeError):
    """Prometheus or Jaeger could not be read; the message names the URL and what failed."""


def _get(url: str, path: str, params: dict) -> dict:
    """GET a JSON API; raise TelemetryError saying what failed."""
    try:
        resp = httpx.get(url.rstrip("/") + path, params=params, timeout=TIMEOUT)
        resp.raise_for_status()
        return resp.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise TelemetryError(f"Error: reading {url.rstrip('/')}{path} failed ({exc}); check the URL and that the "
                             "server is reachable from this machine") from exc


def metric_rows(result: list[dict], metric: str, pods: set[str]) -> list[tuple]:
    """Turn a Prometheus matrix result into AIOpsLab's rows, keeping the namespace's pods.

    Example:
        >>> metric_rows([{"metric": {"pod": "geo-1", "instance": "k:443"}, "values": [[60, "1.23456"]]}],
        ...             "container_threads", {"geo-1"})
        [(60, 'k:443.geo-1', 'container_threads', 1.235)]
    """
    rows = []
    for series in result:
        labels, pod = series.get("metric", {}), series.get("metric", {}).get("pod", "")
        if pod not in pods or pod.startswith(SKIPPED_PODS):
            continue
        name = f"{metric}.{labels['interface']}" if metric in NETWORK_METRICS and "interface" in labels else metric
        cmdb = f"{labels.get('instance', '')}.{pod}"
        rows += [(int(float(t)), cmdb, name, round(float(v), 3)) for t, v in series.get("values", [])]
    return sorted(rows, key=lambda row: row[0])


def export_metrics(url: str, namespace: str, pods: set[str], since: float, until: float, folder: Path) -> list[Path]:
    """Query each container metric over [since, until] (15 s step) and write one CSV per metric with data."""
    (folder / "istio").mkdir(parents=True, exist_ok=True)
    (folder / "container").mkdir(exist_ok=True)
    paths = []
    for metric in METRICS:
        params = {"query": f'{metric}{{namespace="{namespace}"}}', "start": since, "end": until, "step": int(STEP)}
        rows = metric_rows(_get(url, "/api/v1/query_range", params).get("data", {}).get("result", []), metric, pods)
        if rows:
            paths.append(_write(folder / "container" / f"kpi_{metric}.csv", ["timestamp", "cmdb_id", "kpi_name",
                                                                             "value"], rows))
    return paths


def span_rows(trace: dict) -> list[list]:
    """Turn one Jaeger trace into AIOpsLab's rows.

    Example:
        >>> span_rows({"traceID": "t", "processes": {"p1": {"serviceName": "geo"}}, "spans": [{"spanID": "s",
        ...     "operationName": "Nearby", "processID": "p1", "startTime": 5, "duration": 9, "references": [],
        ...     "tags": [{"key": "error", "value": True}]}]})
        [['t', 's', 'ROOT', 'geo', 'Nearby', 5, 9, True, 'Unknown']]
    """
    processes = trace.get("processes", {})
    rows = []
    for span in trace.get("spans", []):
        parents = [r["spanID"] for r in span.get("references") or [] if r.get("refType") == "CHILD_OF"]
        tags = {t.get("key"): t.get("value") for t in span.get("tags") or []}
        response = tags.get("http.status_code", tags.get("response_class", "Unknown"))
        rows.append([span.get("traceID", trace.get("traceID")), span["spanID"], parents[0] if parents else "ROOT",
                     processes.get(span.get("processID"), {}).get("serviceName", ""), span.get("operationName", ""),
                     span.get("startTime"), span.get("duration"), tags.get("error") is True, response])
    return rows


def export_traces(url: str, since: float, until: float, path: Path) -> Path:
    """Fetch every service's traces over [since, until] from Jaeger's query API and write one CSV."""
    services = [s for s in _get(url, "/api/services", {}).get("data") or [] if s not in SKIPPED_SERVICES]
    rows = []
    for service in sorted(services):
        params = {"service": service, "start": int(since * 1e6), "end": int(until * 1e6),
                  "lookback": f"{int(until - since)}s"}
        for trace in _get(url, "/api/traces", params).get("data") or []:
            rows += span_rows(trace)
    return _write(path, TRACE_COLUMNS, rows)


def _write(path: Path, header: list[str], rows: list) -> Path:
    """Write a CSV file with a header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path
