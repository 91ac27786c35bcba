"""Fault injectors as Kubernetes API operations: they run unchanged on the twin and on a real cluster.

Example:
    >>> from aoi.faults import REGISTRY
    >>> from aoi.kube import Kube
    >>> kube = Kube.from_kubeconfig("admin.yaml")  # doctest: +SKIP
    >>> REGISTRY["target_port"].inject(kube, "test-social-network", "user-service")  # doctest: +SKIP
    >>> REGISTRY["target_port"].recover(kube, "test-social-network", "user-service")  # doctest: +SKIP
"""

from __future__ import annotations

from aoi.faults.base import FaultError, Injector
from aoi.faults.chaos import NetworkChaos, PodChaos
from aoi.faults.flagd import FlagdFlag
from aoi.faults.mongo import ExecResult, MongoDropUser, MongoRevoke, MongoTls
from aoi.faults.redeploy import RedeployWithoutPv
from aoi.faults.workloads import Command, Image, MissingNode, Noop, ScaleZero, TargetPort

REGISTRY: dict[str, Injector] = {inj.name: inj for inj in (
    TargetPort(), ScaleZero(), MissingNode(), Image(), Command(), MongoRevoke(), MongoDropUser(), MongoTls(),
    FlagdFlag(), RedeployWithoutPv(), PodChaos(), NetworkChaos(), Noop())}


def get(name: str) -> Injector:
    """Return the injector registered under a mechanism name.

    Example:
        >>> get("scale_zero").name
        'scale_zero'
    """
    if name not in REGISTRY:
        raise KeyError(f"unknown fault mechanism {name!r}; choose one of: {', '.join(REGISTRY)}")
    return REGISTRY[name]


__all__ = ["REGISTRY", "ExecResult", "FaultError", "Injector", "get"]
