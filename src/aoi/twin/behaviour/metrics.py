"""cAdvisor container metrics from the behaviour model, exported as AIOpsLab's kpi_<metric>.csv files."""

from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path

from aoi.twin.core.clock import parse_time
from aoi.twin.core.ids import fnv32a
from aoi.twin.kubelet.usage import UsageModel

STEP = 15.0
CPU_PER_REQUEST = 0.004  # core-seconds one request costs a service
BYTES_PER_REQUEST = 1400
INSTANCE = "kubernetes.default.svc:443"
CPU_METRICS = ("container_cpu_usage_seconds_total", "container_cpu_user_seconds_total",
               "container_cpu_system_seconds_total", "container_cpu_cfs_throttled_seconds_total",
               "container_cpu_cfs_throttled_periods_total", "container_cpu_cfs_periods_total",
               "container_cpu_load_average_10s")
MEMORY_METRICS = ("container_memory_cache", "container_memory_usage_bytes", "container_memory_working_set_bytes",
                  "container_memory_rss", "container_memory_mapped_file")
SPEC_METRICS = ("container_spec_cpu_period", "container_spec_cpu_quota", "container_spec_memory_limit_bytes",
                "container_spec_cpu_shares", "container_threads")
NETWORK_METRICS = ("container_network_receive_packets_dropped_total", "container_network_receive_packets_total",
                   "container_network_receive_bytes_total", "container_network_transmit_bytes_total",
                   "container_network_transmit_errors_total", "container_network_transmit_packets_dropped_total",
                   "container_network_transmit_packets_total")


UNITS = sorted({"m": 1e-3, "Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "K": 1e3, "M": 1e6, "G": 1e9}.items(),
               key=lambda kv: -len(kv[0]))  # longest suffix first: "Mi" before "M"


def quantity(text, default: float = 0.0) -> float:
    """Parse a Kubernetes CPU or memory quantity ('100m', '1', '512Mi', '1Gi')."""
    if text in (None, ""):
        return default
    text = str(text)
    for suffix, factor in UNITS:
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


class BehaviourUsage(UsageModel):
    """Resource usage: the baseline plus what requests and feature flags add (feeds kubectl top and cAdvisor)."""

    def __init__(self, behaviour):
        super().__init__()
        self.behaviour = behaviour

    def container(self, pod: dict, name: str, now: float) -> tuple[float, int]:
        """Return (CPU cores, memory bytes) of a running container at time now."""
        cpu, memory = super().container(pod, name, now)
        cpu += self.behaviour.load.rate(pod["metadata"]["uid"], now) * CPU_PER_REQUEST
        app = self.behaviour.apps.get(pod["metadata"]["namespace"])
        component = self.behaviour.component_of(pod)
        if app is not None and component:
            effect = self.behaviour.flag_effect(app, component)
            cpu += effect.cpu
            memory += int(effect.memory_mb * 1024 * 1024)
        return cpu, memory


class Series:
    """Metric rows of one export."""

    def __init__(self):
        self.rows: dict[str, list[tuple[int, str, str, float]]] = defaultdict(list)

    def add(self, t: float, pod: str, values: tuple[tuple[str, float], ...], suffix: str = "") -> None:
        """Add one sample per metric of a pod at time t (kpi_name: the metric's name plus suffix)."""
        stamp, cmdb, rows = int(t), f"{INSTANCE}.{pod}", self.rows
        for metric, value in values:
            rows[metric].append((stamp, cmdb, metric + suffix, round(value, 3)))


class CpuCounter:
    """container_cpu_usage_seconds_total of one container, integrated forward in 15-second steps."""

    def __init__(self, usage, pod: dict, name: str, start: float):
        self.usage, self.pod, self.name = usage, pod, name
        self.at, self.total, self.started = start, 0.0, start
        self.last: tuple[float, tuple[float, int]] | None = None  # the latest usage sample: (time, usage)

    def usage_at(self, t: float) -> tuple[float, int]:
        """Return the container's (CPU cores, memory bytes) at t (the export's sample at t is the counter's next
        integration point: kept, it is computed once)."""
        if self.last is None or self.last[0] != t:
            self.last = (t, self.usage.container(self.pod, self.name, t))
        return self.last[1]

    def until(self, t: float) -> float:
        """Return the counter at time t (t never goes backwards)."""
        while self.at < t:
            step = min(STEP, t - self.at)
            self.total += self.usage_at(self.at)[0] * step
            self.at += step
        return self.total


class Limits:
    """What a container's spec fixes for its samples, read once per export on its first sample."""

    def __init__(self, pod: dict, spec: dict):
        self.pod_name, self.spec = pod["metadata"]["name"], spec

    @functools.cached_property
    def values(self) -> tuple[float, float, float, int]:
        """Return (CPU limit, CPU request, memory limit, threads)."""
        resources = self.spec.get("resources") or {}
        limits = resources.get("limits") or {}
        cpu = quantity(limits.get("cpu"))
        threads = 8 + fnv32a(f"{self.pod_name}/{self.spec['name']}".encode()) % 24
        return cpu, quantity((resources.get("requests") or {}).get("cpu"), cpu), quantity(limits.get("memory")), threads


def _container_metrics(series: Series, limits: Limits, counter: CpuCounter, t: float) -> None:
    """Add one container's CPU, memory and spec samples at time t."""
    limit, request, memory_limit, threads = limits.values
    total = counter.until(t)
    cpu_now, memory = counter.usage_at(t)
    periods = (t - counter.started) / 0.1 if limit else 0.0
    throttled = max(cpu_now - limit, 0.0) / max(limit, 1e-9) * periods if limit else 0.0
    series.add(t, limits.pod_name, (
        ("container_cpu_usage_seconds_total", total), ("container_cpu_user_seconds_total", total * 0.72),
        ("container_cpu_system_seconds_total", total * 0.28),
        ("container_cpu_cfs_throttled_seconds_total", throttled * 0.1),
        ("container_cpu_cfs_throttled_periods_total", throttled), ("container_cpu_cfs_periods_total", periods),
        ("container_cpu_load_average_10s", 0.0), ("container_memory_usage_bytes", memory * 1.12),
        ("container_memory_working_set_bytes", memory), ("container_memory_rss", memory * 0.78),
        ("container_memory_cache", memory * 0.12), ("container_memory_mapped_file", memory * 0.02),
        ("container_spec_cpu_period", 100000.0), ("container_spec_cpu_quota", limit * 100000),
        ("container_spec_cpu_shares", max(request * 1024, 2)), ("container_spec_memory_limit_bytes", memory_limit),
        ("container_threads", threads)))


def _network_metrics(series: Series, behaviour, pod: dict, start: float, t: float) -> None:
    """Add the pod's eth0 counters at time t (requests plus a background trickle; chaos loss drops packets)."""
    served = behaviour.load.total(pod["metadata"]["uid"], t)
    rx = (t - start) * 180 + served * BYTES_PER_REQUEST
    tx = (t - start) * 150 + served * BYTES_PER_REQUEST * 1.6
    lost = behaviour.chaos_effect_at(pod, t)
    series.add(t, pod["metadata"]["name"], (
        ("container_network_receive_bytes_total", rx), ("container_network_transmit_bytes_total", tx),
        ("container_network_receive_packets_total", rx / 700), ("container_network_transmit_packets_total", tx / 800),
        ("container_network_receive_packets_dropped_total", rx / 700 * lost),
        ("container_network_transmit_packets_dropped_total", 0.0), ("container_network_transmit_errors_total", 0.0)),
        ".eth0")


def collect(twin, namespace: str, since: float, until: float) -> Series:
    """Sample every current pod of a namespace every 15 s between since and until."""
    behaviour, series = twin.extensions.behaviour, Series()
    usage = twin.usage
    runs = twin.controllers["kubelet"].runs
    for pod in twin.list("pods", namespace):
        if pod["metadata"]["name"].startswith(("loadgenerator-", "redis-cart")):
            continue
        run = runs.get((namespace, pod["metadata"]["name"]))
        pod_start = parse_time(pod.get("status", {}).get("startTime")) or until
        counters = {}
        for spec in pod["spec"]["containers"]:
            state = run.containers.get(spec["name"]) if run else None
            if state is not None and state.started_at is not None:
                counters[spec["name"]] = (Limits(pod, spec), CpuCounter(usage, pod, spec["name"], state.started_at))
        t = since - since % STEP + STEP
        while t <= until:
            if t >= pod_start:
                _network_metrics(series, behaviour, pod, pod_start, t)
            for limits, counter in counters.values():
                if t >= counter.started:
                    _container_metrics(series, limits, counter, t)
            t += STEP
    return series


def csv_text(rows: list[tuple[int, str, str, float]]) -> str:
    """Render rows as a kpi CSV, sorted, exactly as csv.writer would (faster: no field ever needs quoting).

    Pod names are DNS labels and metric names identifiers, so no field holds a comma, quote or line break.

    Example:
        >>> csv_text([(30, "i.b", "m", 2.5), (15, "i.a", "m", 1)])
        'timestamp,cmdb_id,kpi_name,value\\n15,i.a,m,1\\n30,i.b,m,2.5\\n'
    """
    return "timestamp,cmdb_id,kpi_name,value\n" + "".join(f"{t},{cmdb},{kpi},{value!r}\n"
                                                          for t, cmdb, kpi, value in sorted(rows))


def export(twin, namespace: str, since: float, until: float, folder: Path) -> list[Path]:
    """Write one kpi_<metric>.csv per metric that has data; return the paths."""
    container = folder / "container"
    container.mkdir(parents=True, exist_ok=True)
    (folder / "istio").mkdir(exist_ok=True)
    paths = []
    for metric, rows in sorted(collect(twin, namespace, since, until).rows.items()):
        path = container / f"kpi_{metric}.csv"
        path.write_text(csv_text(rows), newline="")
        paths.append(path)
    return paths
