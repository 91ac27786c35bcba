"""One Kubernetes client for fault injectors, oracles and the backends: the official client, plain dicts.

It speaks the Kubernetes API only (nothing here imports `aoi.twin`), so the same calls work on the twin and on a
real cluster. An episode opens one `Kube` per kubeconfig and closes it with the episode.

Example:
    >>> from aoi.kube import Kube
    >>> with Kube.from_kubeconfig("admin.yaml") as kube:  # doctest: +SKIP
    ...     kube.patch("deployments", "shop", "cart", {"spec": {"replicas": 0}}, how="merge")
"""

from __future__ import annotations

from aoi.kube.client import Kube, tolerate

__all__ = ["Kube", "tolerate"]
