"""The injector contract, target validation and object re-creation shared by all faults."""

from __future__ import annotations

import copy
import time

from kubernetes.client.rest import ApiException

from aoi.kube import Kube, tolerate

SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink",
                 "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences")
SERVER_ANNOTATIONS = ("deployment.kubernetes.io/revision", "pv.kubernetes.io/bind-completed",
                      "pv.kubernetes.io/bound-by-controller", "volume.beta.kubernetes.io/storage-provisioner",
                      "volume.kubernetes.io/storage-provisioner", "kubectl.kubernetes.io/last-applied-configuration")


class FaultError(RuntimeError):
    """An injection or recovery step failed; the message says which step and what to check."""


class Injector:
    """One fault mechanism: list its valid targets, inject it, recover from it.

    Subclasses set `name` and `summary` and implement `targets`, `inject` and `recover`. Both actions take the
    client, the app namespace and the target (a Service, Deployment, flag, ... name) plus mechanism options, and are
    safe to retry: a second inject or recover leaves the cluster as the first one did.
    """

    name = "injector"
    summary = ""

    def targets(self, kube: Kube, namespace: str) -> list[str]:
        """Return the targets this mechanism accepts in the namespace, sorted."""
        raise NotImplementedError

    def inject(self, kube: Kube, namespace: str, target: str | None, **options) -> object:
        """Put the fault in place."""
        raise NotImplementedError

    def recover(self, kube: Kube, namespace: str, target: str | None, **options) -> object:
        """Undo the fault."""
        raise NotImplementedError

    def check_target(self, kube: Kube, namespace: str, target: str | None) -> str:
        """Return target when the cluster has it; raise ValueError listing the valid ones otherwise."""
        valid = self.targets(kube, namespace)
        if target not in valid:
            listed = ", ".join(valid) if valid else "none (is the app deployed in this namespace?)"
            raise ValueError(f"{self.name}: no target {target!r} in namespace {namespace}; valid targets: {listed}")
        return target

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def for_create(obj: dict) -> dict:
    """Return a copy of a read object fit to be created again: no identity, status or server-set fields."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    for key in SERVER_FIELDS:
        meta.pop(key, None)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in SERVER_ANNOTATIONS}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out.pop("status", None)
    return out


def recreate_deployment(kube: Kube, namespace: str, deployment: dict, timeout: float = 60.0) -> dict:
    """Delete a Deployment and create it again from `deployment`, as `kubectl delete` + `kubectl apply` do."""
    name = deployment["metadata"]["name"]
    body = for_create(deployment)
    with tolerate(404):
        kube.delete("deployments", namespace, name)
    deadline = time.monotonic() + timeout
    while True:
        try:
            return kube.create("deployments", namespace, body)
        except ApiException as exc:  # a real cluster may still be finalizing the old object
            if exc.status != 409 or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def container_of(deployment: dict, container: str | None) -> dict:
    """Return the named container of a Deployment's pod template (the first one when None)."""
    containers = deployment["spec"]["template"]["spec"]["containers"]
    if container is None:
        return containers[0]
    for c in containers:
        if c["name"] == container:
            return c
    names = ", ".join(c["name"] for c in containers)
    raise ValueError(f"deployment {deployment['metadata']['name']} has no container {container!r}; "
                     f"choose one of: {names}")
