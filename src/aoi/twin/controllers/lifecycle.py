"""Garbage collection of owned objects, namespace setup and teardown."""

from __future__ import annotations

from aoi.twin.controllers.base import Controller
from aoi.twin.core import operations

OWNER_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "Service")
DEPENDENT_RESOURCES = ("replicasets", "pods", "endpointslices", "controllerrevisions", "jobs")
ROOT_CA = "-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAVMRMwEQYDVQQDEwprdWJlcm5l\ndGVzMB4XDTI1MDEwMTAwMDAwMFoXDTM1MDEwMTAwMDAwMFowFTETMBEGA1UEAxMK\na3ViZXJuZXRlczBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABP1sbXsimulated\n-----END CERTIFICATE-----\n"  # noqa: E501 (data)


class GarbageCollector(Controller):
    """Delete dependents whose controlling owner is gone (background propagation)."""

    name = "garbage-collector"
    watches = ("deployments", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs", "services")

    def keys_for(self, twin, kind, res, obj):
        if kind != "DELETED":
            return []
        return [(obj["metadata"].get("namespace", ""), obj["metadata"]["uid"])]

    def reconcile(self, twin, key):
        namespace, uid = key
        for name in DEPENDENT_RESOURCES:
            res = twin.resource(name)
            for obj in list(twin.store.list(res, namespace)):
                refs = obj["metadata"].get("ownerReferences") or []
                if any(r.get("uid") == uid for r in refs) and not obj["metadata"].get("deletionTimestamp"):
                    operations.delete(twin, res, namespace, obj["metadata"]["name"])


class NamespaceController(Controller):
    """Give new namespaces their default ServiceAccount and root CA; empty and remove deleted ones."""

    name = "namespace"
    watches = ("namespaces", "pods")

    def keys_for(self, twin, kind, res, obj):
        if res.kind == "Namespace":
            return [("", obj["metadata"]["name"])] if kind != "DELETED" else []
        ns = twin.get("namespaces", "", obj["metadata"]["namespace"])
        return [("", ns["metadata"]["name"])] if ns and ns["metadata"].get("deletionTimestamp") else []

    def reconcile(self, twin, key):
        ns = twin.get("namespaces", "", key[1])
        if ns is None:
            return
        if ns["metadata"].get("deletionTimestamp"):
            self._empty(twin, ns)
        else:
            self._populate(twin, key[1])

    def _populate(self, twin, name: str) -> None:
        """Create the default ServiceAccount and the kube-root-ca.crt ConfigMap."""
        if twin.get("serviceaccounts", name, "default") is None:
            twin.store.create(twin.resource("serviceaccounts"),
                              {"metadata": {"name": "default", "namespace": name}})
        if twin.get("configmaps", name, "kube-root-ca.crt") is None:
            twin.store.create(twin.resource("configmaps"), {
                "metadata": {"name": "kube-root-ca.crt", "namespace": name,
                             "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to "
                                             "verify the kube-apiserver when using internal endpoints such as the "
                                             "internal service IP or kubernetes.default.svc. No other usage is "
                                             "guaranteed across distributions of Kubernetes clusters."}},
                "data": {"ca.crt": ROOT_CA}})

    def _empty(self, twin, ns: dict) -> None:
        """Delete everything in a terminating namespace; remove it once nothing is left."""
        name = ns["metadata"]["name"]
        for res in twin.store.resources():
            if not res.namespaced:
                continue
            for obj in list(twin.store.list(res, name)):
                if not obj["metadata"].get("deletionTimestamp"):
                    operations.delete(twin, res, name, obj["metadata"]["name"])
        remaining = sum(len(twin.store.list(r, name)) for r in twin.store.resources() if r.namespaced)
        if remaining == 0:
            twin.store.delete(twin.resource("namespaces"), "", name)
