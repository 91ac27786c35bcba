"""The problem catalogue's records: a family (declared data), and the problem one id resolves to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from aoi.tasks import TaskType

TWIN, AIOPSLAB = "twin", "aiopslab"


def frozen(mapping: Mapping | None = None) -> Mapping:
    """Return a read-only view of a dict, so shared table rows cannot be changed by accident."""
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, kw_only=True)
class Workload:
    """A wrk2 run as AIOpsLab starts it: a Lua script aimed at one Service of the app."""

    script: str        # path inside aiopslab-applications
    service: str       # Service whose ClusterIP the URL uses
    port: int
    path: str          # appended to http://<ClusterIP>:<port>
    rate: int
    duration: int      # seconds
    dist: str = "exp"
    connections: int = 2
    threads: int = 2

    def url(self, cluster_ip: str) -> str:
        """Return the URL wrk2 targets, given the Service's ClusterIP.

        Example:
            >>> Workload(script="x.lua", service="frontend", port=5000, path="", rate=10, duration=10).url("10.96.0.7")
            'http://10.96.0.7:5000'
        """
        return f"http://{cluster_ip}:{self.port}{self.path}"


@dataclass(frozen=True, kw_only=True)
class Family:
    """One fault family: how its ids are named, which targets it accepts, what it injects and expects.

    `targets` holds the default target of each numbered instance (`-1`, `-2`, ...); `instances` names the id
    suffixes when they are not plain numbers (container_kill and the Flower ids have none).
    """

    name: str                        # AIOpsLab's family folder
    id_format: str                   # e.g. "revoke_auth_mongodb-{task}-{n}"
    app: str
    mechanism: str                   # fault injector name in aoi.faults
    tasks: tuple[str, ...]
    targets: tuple[str | None, ...]  # default target per instance
    rule: str                        # valid-target rule, see aoi.problems.targets
    params: Mapping = field(default_factory=frozen)
    analysis: tuple[str, str] | None = None   # (system_level, fault_type)
    # AIOpsLab's mitigation predicate (aoi.problems.parity.PARITY); the default is its generic, guarded
    # "all pods normal" (Task.sys_status_after_recovery), used where AIOpsLab has no mitigation id.
    parity: str = "pods_normal_guarded"
    workload: str | None = None      # key into WORKLOADS
    detection: str = "Yes"
    backend: str = TWIN


@dataclass(frozen=True, kw_only=True)
class Fault:
    """What to inject and what a fixed system looks like.

    `params` are the keyword arguments of the aoi.faults injector: `REGISTRY[mechanism].inject(kube, namespace,
    target, **params)`. `expect` holds the facts the oracles compare against (original image, command, replicas,
    the MongoDB user and role, the flag's ConfigMap, ...), all read from the app's manifests.
    """

    mechanism: str
    namespace: str
    target: str | None
    params: Mapping = field(default_factory=frozen)
    expect: Mapping = field(default_factory=frozen)


@dataclass(frozen=True)
class Answers:
    """The expected submissions. `localization` lists every accepted name, canonical first."""

    detection: str
    localization: tuple[str, ...] = ()
    system_level: str | None = None
    fault_type: str | None = None


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One problem id resolved to a concrete target: everything an episode needs to run and be judged."""

    id: str
    task_type: str
    app: str
    namespace: str
    family: str
    target: str | None
    backend: str
    fault: Fault
    answers: Answers
    parity: str
    workload: Workload | None
    valid_targets: tuple[str, ...]

    def expected_answer(self) -> Any:
        """Return the submit argument the strict verdict accepts: "Yes" or "No", a list of the canonical component,
        the two analysis labels, or None (a mitigation submits nothing).

        Example:
            >>> from aoi.problems import make
            >>> make("revoke_auth_mongodb-localization-1").expected_answer()
            ['mongodb-geo']
        """
        a = self.answers
        return {TaskType.DETECTION: a.detection, TaskType.LOCALIZATION: list(a.localization[:1]),
                TaskType.ANALYSIS: {"system_level": a.system_level, "fault_type": a.fault_type},
                TaskType.MITIGATION: None}[self.task_type]

    def require_backend(self, backend: str) -> None:
        """Raise ValueError when this problem cannot run on `backend`."""
        if backend == TWIN and self.backend != TWIN:
            raise ValueError(f"{self.id} runs {self.app} under Docker Compose, which the twin does not simulate; "
                             f"run it with backend='aiopslab' on a host with AIOpsLab and Docker installed")
