"""Resource usage of running containers (what metrics-server and cAdvisor report), deterministic in time."""

from __future__ import annotations

import functools

from aoi.twin.core.ids import fnv32a

MIB = 1024 * 1024


@functools.lru_cache(maxsize=1 << 16)  # a pure function; every 15-second sample asks the same few texts again
def _unit(text: str) -> float:
    """Return a stable number in [0, 1) for a text."""
    return fnv32a(text.encode()) / 2**32


class UsageModel:
    """Baseline usage per container with slow deterministic drift; the behaviour model adds load on top."""

    def __init__(self):
        self.extra: dict[tuple[str, str], tuple[float, int]] = {}  # (pod uid, container) -> (cpu, bytes) added

    def container(self, pod: dict, name: str, now: float) -> tuple[float, int]:
        """Return (CPU cores, memory bytes) of one running container at time now."""
        key = f"{pod['metadata'].get('labels', {}).get('pod-template-hash', '')}/{pod['metadata']['name']}/{name}"
        base_cpu = 0.001 + 0.02 * _unit(key + "cpu")
        base_mem = int((8 + 110 * _unit(key + "mem")) * MIB)
        minute = int(now // 60)
        drift = 0.8 + 0.4 * _unit(f"{key}{minute}")
        extra_cpu, extra_mem = self.extra.get((pod["metadata"].get("uid", ""), name), (0.0, 0))
        return base_cpu * drift + extra_cpu, int(base_mem * (0.95 + 0.1 * _unit(f"{key}m{minute}"))) + extra_mem

    def node_overhead(self, node: str) -> tuple[float, int]:
        """Return (CPU cores, memory bytes) used by a node outside pods (system daemons)."""
        return 0.08 + 0.05 * _unit(node), int((450 + 200 * _unit(node + "m")) * MIB)
