"""The Probe's checks: each is a read-only tool call built from what the run has seen, and the analyzers of its
output. Outputs stay small on purpose (custom columns, tails), so they pass the Compressor unchanged.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from aoi.models.expert import contract
from aoi.models.expert.analyzers import (
    Evidence,
    chaos,
    config,
    deployments,
    events,
    logs,
    metrics,
    pods,
    services,
    storage,
    traces,
)
from aoi.models.expert.analyzers.table import rows

DEPLOY_COLUMNS = ("NAME:.metadata.name,REPLICAS:.spec.replicas,READY:.status.readyReplicas,"
                  "CONTAINERS:.spec.template.spec.containers[*].name,NODESELECTOR:.spec.template.spec.nodeSelector,"
                  "IMAGE:.spec.template.spec.containers[*].image,COMMAND:.spec.template.spec.containers[*].command")
CHAOS_COLUMNS = ("KIND:.kind,NAME:.metadata.name,ACTION:.spec.action,SELECTOR:.spec.selector.labelSelectors,"
                 "DURATION:.spec.duration")
INIT_DIRS = ("/docker-entrypoint-initdb.d",)  # scripts there run once at first start, never for repairs
PLATFORM = ("kube-system", "kube-public", "kube-node-lease", "default", "local-path-storage", "observe", "openebs",
            "chaos-mesh", "monitoring")  # namespaces of the cluster's own machinery, never the app under test


@dataclass
class Step:
    """One tool call of this run and what came back."""

    check: str
    tool: str
    args: dict
    observation: str


def tool_calls(messages: list[dict]) -> Iterator[tuple[dict, str]]:
    """Yield (tool call, observation) for each of a role's own calls in its conversation (after the prompt).

    Example:
        >>> list(tool_calls([{"content": '{"tool": "exec_shell"}'}, {"content": "ok"}, {"content": "prose"},
        ...                  {"content": "feedback"}]))
        [({'tool': 'exec_shell'}, 'ok')]
    """
    for i in range(0, len(messages) - 1, 2):
        try:
            call = json.loads(messages[i]["content"])
        except (ValueError, TypeError):
            continue
        if isinstance(call, dict):
            yield call, str(messages[i + 1]["content"])


class Seen:
    """What the run has observed so far, by check."""

    def __init__(self, namespace: str, steps: list[Step]):
        self.ns, self.steps = namespace, steps

    def output(self, check: str) -> str | None:
        """Return the latest usable output of a check (None when not run or refused)."""
        for step in reversed(self.steps):
            if step.check == check and contract.succeeded(step.observation):
                return step.observation
        return None

    def ran(self, check: str) -> bool:
        """Return whether the run made this check."""
        return any(step.check == check for step in self.steps)


def kubectl(command: str) -> tuple[str, dict]:
    """Return an exec_shell tool call."""
    return "exec_shell", {"command": command}


Call = Callable[[Seen, list[str]], tuple[str, dict] | None]
CALLS: dict[str, Call] = {
    "namespaces": lambda s, t: kubectl("kubectl get pods -A"),
    "pods": lambda s, t: kubectl(f"kubectl get pods -n {s.ns}"),
    "events": lambda s, t: kubectl(f"kubectl get events -n {s.ns} --field-selector type=Warning"),
    "deployments": lambda s, t: kubectl(f"kubectl get deployments -n {s.ns} -o custom-columns={DEPLOY_COLUMNS}"),
    "chaos": lambda s, t: kubectl(f"kubectl get podchaos,networkchaos -n {s.ns} -o custom-columns={CHAOS_COLUMNS}"),
    "services": lambda s, t: kubectl(f"kubectl get services -n {s.ns} -o custom-columns=NAME:.metadata.name,"
                                     "SELECTOR:.spec.selector,PORT:.spec.ports[*].port,TARGET:.spec.ports[*].targetPort"),
    "pod_ports": lambda s, t: kubectl(f"kubectl get pods -n {s.ns} -o custom-columns=NAME:.metadata.name,"
                                      "LABELS:.metadata.labels,PORTS:.spec.containers[*].ports[*].containerPort"),
    "endpoints": lambda s, t: kubectl(f"kubectl get endpoints -n {s.ns}"),
    "configmaps": lambda s, t: kubectl(f"kubectl get configmaps -n {s.ns}"),
    "mounts": lambda s, t: kubectl(f"kubectl get deployments -n {s.ns} -o custom-columns=NAME:.metadata.name,"
                                   "CONFIGMAPS:.spec.template.spec.volumes[*].configMap.name"),
    "flags": lambda s, t: _flag_maps(s),
    "claims": lambda s, t: kubectl(f"kubectl get pvc -n {s.ns}"),
    "volumes": lambda s, t: kubectl("kubectl get pv") if storage.pending_claims(s.output("claims") or "") else None,
    "traces": lambda s, t: ("get_traces", {"namespace": s.ns, "duration": 5}),
    "trace_summary": lambda s, t: _read(_path(s.output("traces"), r"exported to: (\S+)"), "aggregate",
                                        by="service_name"),
    "metrics": lambda s, t: ("get_metrics", {"namespace": s.ns, "duration": 5}),
    "cpu": lambda s, t: _read(_kpi(s.output("metrics"), "container_cpu_usage_seconds_total"), "summary"),
    "drops": lambda s, t: _read(_kpi(s.output("metrics"), "container_network_receive_packets_dropped_total"),
                                "summary"),
    "db_describe": lambda s, t: kubectl(f"kubectl describe deployment {t[0]} -n {s.ns}") if t else None,
    "db_config": lambda s, t: _db_maps(s, t),
    "db_logs": lambda s, t: kubectl(f"kubectl logs deployment/{t[0]} -n {s.ns} --tail 20") if t else None,
    "verify_pods": lambda s, t: kubectl(f"kubectl get pods -n {s.ns} -o wide"),
    "verify_deployments": lambda s, t: kubectl(f"kubectl get deployments -n {s.ns} -o custom-columns={DEPLOY_COLUMNS}"
                                               " --sort-by=.metadata.name"),
    "verify_services": lambda s, t: kubectl(f"kubectl get services -n {s.ns} -o custom-columns=NAME:.metadata.name,"
                                            "SELECTOR:.spec.selector,PORT:.spec.ports[*].port,"
                                            "TARGET:.spec.ports[*].targetPort --sort-by=.metadata.name"),
    "verify_pod_ports": lambda s, t: kubectl(f"kubectl get pods -n {s.ns} -o custom-columns=NAME:.metadata.name,"
                                             "LABELS:.metadata.labels,PORTS:.spec.containers[*].ports[*].containerPort"
                                             " --sort-by=.metadata.name"),
    "verify_claims": lambda s, t: kubectl(f"kubectl get pvc -n {s.ns} -o wide"),
    "verify_config": lambda s, t: kubectl(f"kubectl get configmap {t[0]} -n {s.ns} -o yaml --show-managed-fields=false")
    if t else None,
}
VARIANTS = ("", " --show-labels", " --sort-by=.metadata.name", " --show-kind")  # a re-run check must read differently


def busiest_namespace(steps: list[Step]) -> str | None:
    """Return the application namespace with the most pods in a `kubectl get pods -A` answer.

    Example:
        >>> t = "NAMESPACE     NAME\\nshop          a\\nshop          b\\nkube-system   c\\n"
        >>> busiest_namespace([Step("namespaces", "", {}, t)])
        'shop'
    """
    listing = next((s.observation for s in steps if s.check == "namespaces"), "")
    counts: dict[str, int] = {}
    for r in rows(listing, ("NAMESPACE",)):
        if r.get("NAMESPACE") not in PLATFORM:
            counts[r["NAMESPACE"]] = counts.get(r["NAMESPACE"], 0) + 1
    return max(counts, key=counts.get) if counts else None


def call(check: str, seen: Seen, targets: list[str]) -> tuple[str, dict] | None:
    """Return the tool call of a check, or None when it does not apply (yet)."""
    if check.startswith("logs:"):
        return _logs(seen, check.split(":", 1)[1])
    if check.startswith("previous:"):
        return kubectl(f"kubectl logs {check.split(':', 1)[1]} -n {seen.ns} --tail 40 --previous")
    return CALLS[check](seen, targets)


def _logs(seen: Seen, pod: str) -> tuple[str, dict]:
    """Read a pod's log; the previous container's when the listing shows it restarted (that is where the crash is)."""
    listing = seen.output("pods") or ""
    restarted = any(r.get("NAME") == pod and r.get("RESTARTS", "0")[:1] not in ("0", "") for r in rows(listing))
    return kubectl(f"kubectl logs {pod} -n {seen.ns} --tail 40" + (" --previous" if restarted else ""))


def _read(path: str | None, op: str, **args) -> tuple[str, dict] | None:
    return ("read_file", {"path": path, "op": op, **args}) if path else None


def _path(text: str | None, pattern: str) -> str | None:
    match = re.search(pattern, text or "")
    return match.group(1) if match else None


def _kpi(text: str | None, metric: str) -> str | None:
    """Return the path of one metric's CSV in a get_metrics answer (the folder line plus the tree)."""
    folder = _path(text, r"directory: (\S+)")
    if not folder or f"kpi_{metric}.csv" not in (text or ""):
        return None
    return f"{folder}/container/kpi_{metric}.csv"


def _flag_maps(seen: Seen) -> tuple[str, dict] | None:
    """Read the ConfigMaps that hold feature flags (their names say so)."""
    names = [r["NAME"] for r in rows(seen.output("configmaps") or "") if "flag" in r.get("NAME", "").lower()]
    return kubectl(f"kubectl get configmap {' '.join(names)} -n {seen.ns} -o yaml") if names else None


def _db_maps(seen: Seen, targets: list[str]) -> tuple[str, dict] | None:
    """Read the ConfigMaps the database mounts, except one-shot init scripts."""
    mounted = config.mounts(seen.output("db_describe") or "")
    names = [cm for cm, path in mounted.items() if path not in INIT_DIRS]
    return kubectl(f"kubectl get configmap {' '.join(names)} -n {seen.ns} -o yaml") if names else None


def evidence(seen: Seen, targets: list[str]) -> list[Evidence]:
    """Run the analyzers over every output of the run."""
    found: list[Evidence] = []
    for step in seen.steps:
        found += analyzed(step.check, step.observation, seen.ns, tuple(targets))
    for svc, ports in (("services", "pod_ports"), ("verify_services", "verify_pod_ports")):
        if seen.output(svc) and seen.output(ports):
            found += _port_mismatches(seen.output(svc), seen.output(ports))
    return found


@functools.lru_cache(maxsize=512)
def analyzed(check: str, output: str, ns: str, targets: tuple[str, ...]) -> tuple[Evidence, ...]:
    """Return the evidence in one check's output.

    Kept, since every call of a probe run re-reads all its earlier outputs; the arguments are all an analyzer
    sees, and evidence is never changed once made (Evidence is frozen).

    Example:
        >>> [e.kind for e in analyzed("endpoints", "NAME   ENDPOINTS\\napi    <none>\\n", "shop", ())]
        ['no_endpoints']
    """
    kind, _, pod = check.partition(":")
    if pod:
        return tuple(logs.analyze(pod, output))
    reader = ANALYZERS.get(kind)
    return tuple(reader(output, ns, list(targets))) if reader else ()


@functools.lru_cache(maxsize=64)
def _port_mismatches(services_table: str, pods_table: str) -> tuple[Evidence, ...]:
    """Return the Services whose targetPort no selected pod declares (kept, like `analyzed`)."""
    return tuple(services.port_mismatches(services_table, pods_table))


def _mounts_table(text: str, ns: str, targets: list[str]) -> list[Evidence]:
    """Return which ConfigMaps each deployment mounts (the config check's custom columns)."""
    return [Evidence("mounts", r["NAME"], "", {"mounts": {cm: "" for cm in r.get("CONFIGMAPS", "").split(",")
                                                          if cm and cm != "<none>"}}) for r in rows(text)]


def _trace_summary(text: str, ns: str, targets: list[str]) -> list[Evidence]:
    """Return the trace evidence plus the traced service names (they name the app's components)."""
    return traces.analyze(text) + [Evidence("traces_seen", s["service"], "", {}) for s in traces.services(text)]


def _db_logs(text: str, ns: str, targets: list[str]) -> list[Evidence]:
    """Return whether the database's own log says it requires TLS."""
    return [Evidence(e.kind, targets[0], e.detail, e.facts) for e in logs.analyze(targets[0], text)
            if e.kind == "tls_in_use"] if targets else []


def _plain(analyze: Callable[[str], list[Evidence]]):
    return lambda text, ns, targets: analyze(text)


# Each reader sees the check's output, the namespace and the instruction's targets: nothing else (see `analyzed`).
ANALYZERS: dict[str, Callable[[str, str, list[str]], list[Evidence]]] = {
    **{check: _plain(fn) for check, fn in (
        ("pods", pods.analyze), ("verify_pods", pods.analyze), ("events", events.analyze), ("chaos", chaos.analyze),
        ("flags", config.analyze), ("db_config", config.analyze), ("verify_config", config.analyze),
        ("claims", storage.pending_claims), ("verify_claims", storage.pending_claims),
        ("endpoints", services.without_endpoints), ("cpu", metrics.cpu), ("drops", metrics.drops))},
    "deployments": lambda text, ns, targets: deployments.analyze(text) + [_names(text)],
    "verify_deployments": lambda text, ns, targets: deployments.analyze(text) + [_names(text)],
    "volumes": lambda text, ns, targets: storage.released_volumes(text, ns),
    "mounts": _mounts_table, "trace_summary": _trace_summary, "db_logs": _db_logs,
    "db_describe": lambda text, ns, targets: [Evidence("mounts", targets[0], "", {"mounts": config.mounts(text)})]
    if targets else [],
}


def _names(table: str) -> Evidence:
    """Return the deployment names of a table as one fact."""
    return Evidence("names", "", "", {"names": [r["NAME"] for r in rows(table) if r.get("NAME")]})
