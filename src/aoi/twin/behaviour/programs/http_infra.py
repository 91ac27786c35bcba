"""What the platform's HTTP servers answer: Jaeger query, Prometheus, Consul, flagd, the API server and friends."""

from __future__ import annotations

import json
from collections import defaultdict

from aoi.twin.behaviour.programs.common import pod_ip
from aoi.twin.behaviour.programs.http_routes import GO_404, Request, Response, as_json, text


def jaeger(req: Request, serve) -> Response:
    """Jaeger all-in-one: the query API and UI on 16686 (under /jaeger/ui in the demo), admin health on 14269."""
    path = req.path.removeprefix("/jaeger/ui")
    if req.headers.get(":port") == "14269":
        return as_json(200, {"status": "Server available", "upSince": "2025-06-02T09:00:04Z", "uptime": "5m0s"})
    spans = list(req.twin.extensions.behaviour.traces.spans.get(req.pod["metadata"]["namespace"], ()))
    if path == "/api/services":
        names = sorted({s.service for s in spans})
        return as_json(200, {"data": names, "total": len(names), "limit": 0, "offset": 0, "errors": None})
    if path.startswith("/api/services/") and path.endswith("/operations"):
        service = path.split("/")[3]
        ops = sorted({s.operation for s in spans if s.service == service})
        return as_json(200, {"data": ops, "total": len(ops), "limit": 0, "offset": 0, "errors": None})
    if path == "/api/traces":
        return _traces(req, spans)
    if path in ("", "/", "/search"):
        return text(200, "<!doctype html><html lang=\"en\"><head><title>Jaeger UI</title></head><body>"
                         "<div id=\"jaeger-ui-root\"></div></body></html>", "text/html; charset=utf-8")
    return text(404, GO_404)


def _traces(req: Request, spans: list) -> Response:
    service = req.arg("service")
    if not service:
        return as_json(400, {"data": None, "total": 0, "limit": 0, "offset": 0,
                             "errors": [{"code": 400, "msg": "parameter 'service' is required"}]})
    limit = int(req.arg("limit") or 20) if (req.arg("limit") or "20").isdigit() else 20
    by_trace = defaultdict(list)
    for s in spans:
        by_trace[s.trace_id].append(s)
    chosen = [t for t in sorted(by_trace, key=lambda t: -by_trace[t][0].start)
              if any(s.service == service for s in by_trace[t])][:limit]
    return as_json(200, {"data": [_trace(tid, by_trace[tid]) for tid in chosen], "total": 0, "limit": 0,
                         "offset": 0, "errors": None})


def _trace(trace_id: str, spans: list) -> dict:
    services = sorted({s.service for s in spans})
    pid = {name: f"p{i + 1}" for i, name in enumerate(services)}
    return {"traceID": trace_id, "spans": [
        {"traceID": trace_id, "spanID": s.span_id, "operationName": s.operation,
         "references": [{"refType": "CHILD_OF", "traceID": trace_id, "spanID": s.parent}] if s.parent else [],
         "startTime": int(s.start * 1e6), "duration": max(int(s.duration * 1e6), 1),
         "tags": [{"key": "error", "type": "bool", "value": True}] if s.error else [],
         "logs": [], "processID": pid[s.service], "warnings": None} for s in spans],
        "processes": {pid[n]: {"serviceName": n, "tags": []} for n in services}, "warnings": None}


def prometheus(req: Request, serve) -> Response:
    """Prometheus: health, readiness, and an (empty) query API."""
    if req.path == "/-/healthy":
        return text(200, "Prometheus Server is Healthy.\n")
    if req.path == "/-/ready":
        return text(200, "Prometheus Server is Ready.\n")
    if req.path == "/":
        return text(302, '<a href="/query">Found</a>.\n\n', "text/html; charset=utf-8", Location="/query")
    if req.path in ("/api/v1/query", "/api/v1/query_range"):
        if not req.arg("query"):
            return as_json(400, {"status": "error", "errorType": "bad_data", "error": "invalid parameter \"query\": "
                                 "unknown position: parse error: no expression found in input"})
        return as_json(200, {"status": "success", "data": {"resultType": "vector", "result": []}})
    if req.path == "/api/v1/targets":
        return as_json(200, {"status": "success", "data": {"activeTargets": [], "droppedTargets": []}})
    return text(404, GO_404)


def consul(req: Request, serve) -> Response:
    """Consul's HTTP API: leader, the services the apps registered, and the UI redirect."""
    if req.path == "/v1/status/leader":
        return as_json(200, f"{pod_ip(req.pod)}:8300")
    if req.path == "/v1/catalog/services":
        names = {"consul": []} | {f"srv-{n}": [] for n, spec in (req.app.components.items() if req.app else [])
                                  if spec.get("discovery") == "consul"}
        return as_json(200, dict(sorted(names.items())))
    if req.path == "/":
        return text(301, '<a href="/ui/">Moved Permanently</a>.\n\n', "text/html; charset=utf-8", Location="/ui/")
    if req.path.startswith("/ui"):
        return text(200, "<!DOCTYPE html><html><head><title>Consul by HashiCorp</title></head></html>",
                    "text/html; charset=utf-8")
    return text(404, "")


def _flags(req: Request) -> dict:
    cm = req.twin.get("configmaps", req.pod["metadata"]["namespace"], "flagd-config")
    try:
        return json.loads(((cm or {}).get("data") or {}).get("demo.flagd.json", "{}")).get("flags", {})
    except ValueError:
        return {}


def flagd(req: Request, serve) -> Response:
    """flagd: Connect/JSON ResolveAll on 8013, OFREP on 8016, health on 8014, the UI on 4000."""
    loaded = req.twin.extensions.behaviour.flags.get(req.pod["metadata"]["namespace"], {})
    flags = {name: (loaded.get(name, spec.get("defaultVariant")), spec) for name, spec in _flags(req).items()}
    port = req.headers.get(":port")
    if port == "4000":
        return text(200, "<!DOCTYPE html><html><head><title>Flagd Configurator</title></head></html>", "text/html")
    if port == "8014" and req.path in ("/healthz", "/readyz"):
        return text(200, "")
    if req.path.endswith("/ResolveAll") and req.method == "POST":
        return as_json(200, {"flags": {n: {"reason": "STATIC", "variant": v, "boolValue" if isinstance(
            s.get("variants", {}).get(v), bool) else "stringValue": s.get("variants", {}).get(v)}
            for n, (v, s) in flags.items()}})
    if req.path.startswith("/ofrep/v1/evaluate/flags") and req.method == "POST":
        key = req.path.removeprefix("/ofrep/v1/evaluate/flags").strip("/")
        items = [{"key": n, "reason": "STATIC", "variant": v, "value": s.get("variants", {}).get(v)}
                 for n, (v, s) in flags.items() if not key or n == key]
        if key and not items:
            return as_json(404, {"key": key, "errorCode": "FLAG_NOT_FOUND", "errorDetails": f"flag '{key}' not found"})
        return as_json(200, items[0] if key else {"flags": items})
    return text(404, GO_404)


def api_server(req: Request, serve) -> Response:
    """kube-apiserver seen from a pod: health and version to anyone, 403 for everything else."""
    if req.path in ("/healthz", "/livez", "/readyz"):
        return text(200, "ok")
    if req.path == "/version":
        return as_json(200, {"major": "1", "minor": "32", "gitVersion": "v1.32.2", "gitCommit":
                             "67a30c0adcf52bd3f56ff0893ce19966be12991f", "gitTreeState": "clean", "buildDate":
                             "2025-02-25T05:37:21Z", "goVersion": "go1.23.6", "compiler": "gc",
                             "platform": "linux/amd64"})
    user = "system:anonymous"
    if req.headers.get("authorization", "").startswith("Bearer "):
        user = f"system:serviceaccount:{req.headers.get(':namespace', 'default')}:default"
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"forbidden: User \"{user}\" cannot get path \"{req.path}\"", "reason": "Forbidden",
            "details": {}, "code": 403}
    return Response(403, json.dumps(body, indent=2) + "\n", "application/json")


def simple(req: Request, serve) -> Response:
    """Other HTTP servers: a health or landing page where they have one, else Go's 404."""
    name = req.component
    if name == "opensearch" and req.path in ("/", "/_cluster/health"):
        doc = ({"name": req.pod["metadata"]["name"], "cluster_name": "demo-cluster", "version": {
            "distribution": "opensearch", "number": "2.19.0"}, "tagline": "The OpenSearch Project: "
                                                                         "https://opensearch.org/"}
               if req.path == "/" else {"cluster_name": "demo-cluster", "status": "green", "number_of_nodes": 1})
        return as_json(200, doc, "application/json; charset=UTF-8")
    if name == "grafana":
        return (as_json(200, {"database": "ok", "version": "11.5.2"}) if req.path == "/api/health" else
                text(302, '<a href="/login">Found</a>.\n\n', "text/html; charset=utf-8", Location="/login"))
    if req.path in ("/-/healthy", "/healthz"):
        return text(200, "OK")
    if req.path == "/metrics":
        return text(200, "# HELP up Whether the target is up.\n# TYPE up gauge\nup 1\n",
                    "text/plain; version=0.0.4; charset=utf-8")
    if name == "load-generator" and req.path == "/":
        return text(200, "<!DOCTYPE html><html><head><title>Locust</title></head></html>", "text/html")
    return text(404, GO_404)
