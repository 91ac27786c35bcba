"""Redeploy an app namespace without its PersistentVolumes: Retain PVs stay Released, the new claims stay Pending."""

from __future__ import annotations

from aoi.faults.base import Injector, for_create
from aoi.kube import Kube

# What a redeploy re-creates, in apply order: (resource, apiVersion, kind).
RBAC = "rbac.authorization.k8s.io/v1"
KINDS = (("serviceaccounts", "v1", "ServiceAccount"), ("secrets", "v1", "Secret"), ("configmaps", "v1", "ConfigMap"),
         ("persistentvolumeclaims", "v1", "PersistentVolumeClaim"), ("services", "v1", "Service"),
         ("roles", RBAC, "Role"), ("rolebindings", RBAC, "RoleBinding"), ("deployments", "apps/v1", "Deployment"),
         ("statefulsets", "apps/v1", "StatefulSet"), ("daemonsets", "apps/v1", "DaemonSet"))
GENERATED = {("ServiceAccount", "default"), ("ConfigMap", "kube-root-ca.crt")}  # each namespace gets its own


def _clean(kind: str, obj: dict) -> dict:
    """Return an object as its manifest would read: no server-assigned IPs, ports, bindings or token refs."""
    obj = for_create(obj)
    spec = obj.get("spec") or {}
    if kind == "Service":
        for key in ("clusterIP", "clusterIPs", "healthCheckNodePort"):
            spec.pop(key, None)
        for port in spec.get("ports") or []:
            port.pop("nodePort", None)
    elif kind == "PersistentVolumeClaim":
        spec.pop("volumeName", None)
        obj["metadata"].pop("finalizers", None)
    elif kind == "ServiceAccount":
        obj.pop("secrets", None)
    return obj


def snapshot(kube: Kube, namespace: str) -> list[tuple[str, dict]]:
    """Return (resource, object) for everything a redeploy re-creates, in apply order."""
    out = []
    for resource, api_version, kind in KINDS:
        for obj in kube.list(resource, namespace):
            if (kind, obj["metadata"]["name"]) in GENERATED or obj.get("type") == "kubernetes.io/service-account-token":
                continue
            obj = _clean(kind, obj)
            obj["apiVersion"], obj["kind"] = api_version, kind
            out.append((resource, obj))
    return out


class RedeployWithoutPv(Injector):
    """Delete the app namespace and deploy it again while its Retain PVs keep their stale claimRef.

    AIOpsLab re-applies the app's manifests; here the namespace's own objects (snapshotted through the API) are
    applied again, so the same code works for any app on any cluster. The new PVCs stay Pending because the
    Released PVs still point at the old claims; the MongoDBs stay Pending and their clients crash.
    """

    name = "redeploy_without_pv"
    summary = "snapshot the namespace, delete it, wait, re-create it and its objects; recover clears PV claimRefs"

    def targets(self, kube, namespace):
        return [namespace] if kube.list("persistentvolumeclaims", namespace) else []

    def inject(self, kube, namespace, target=None, timeout: float = 180.0, **options) -> list[str]:
        """Redeploy the namespace; return the 'Kind/name' of every object created again."""
        self.check_target(kube, namespace, target or namespace)
        objects = snapshot(kube, namespace)
        ns = kube.get("namespaces", None, namespace)
        kube.delete("namespaces", None, namespace)
        kube.wait_namespace_gone(namespace, timeout)
        kube.create("namespaces", None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": namespace, "labels": ns["metadata"].get("labels") or {},
            "annotations": ns["metadata"].get("annotations") or {}}})
        created = []
        for resource, obj in objects:
            kube.create(resource, namespace, obj)
            created.append(f"{obj['kind']}/{obj['metadata']['name']}")
        return created

    def recover(self, kube, namespace, target=None, **options) -> list[str]:
        """Clear the stale claimRef of the namespace's Released PVs so the new claims bind; return the PV names."""
        freed = []
        for pv in kube.list("persistentvolumes"):
            ref = pv["spec"].get("claimRef") or {}
            if pv.get("status", {}).get("phase") == "Released" and ref.get("namespace") == namespace:
                kube.patch("persistentvolumes", None, pv["metadata"]["name"], {"spec": {"claimRef": None}}, how="merge")
                freed.append(pv["metadata"]["name"])
        return freed
