"""Redeploy an app namespace without its PersistentVolumes: Retain PVs stay Released, the new claims stay Pending."""

from __future__ import annotations

from aoi.faults.base import Injector, for_create
from aoi.faults.client import Kube

# What a redeploy re-creates, in apply order: (api, method noun, apiVersion, kind).
KINDS = (("core", "service_account", "v1", "ServiceAccount"), ("core", "secret", "v1", "Secret"),
         ("core", "config_map", "v1", "ConfigMap"), ("core", "persistent_volume_claim", "v1", "PersistentVolumeClaim"),
         ("core", "service", "v1", "Service"), ("rbac", "role", "rbac.authorization.k8s.io/v1", "Role"),
         ("rbac", "role_binding", "rbac.authorization.k8s.io/v1", "RoleBinding"),
         ("apps", "deployment", "apps/v1", "Deployment"), ("apps", "stateful_set", "apps/v1", "StatefulSet"),
         ("apps", "daemon_set", "apps/v1", "DaemonSet"))
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
    """Return (method noun, object) for everything a redeploy re-creates, in apply order."""
    out = []
    for api, noun, api_version, kind in KINDS:
        client = getattr(kube, api)
        for obj in kube.call(getattr(client, f"list_namespaced_{noun}"), namespace)["items"]:
            if (kind, obj["metadata"]["name"]) in GENERATED or obj.get("type") == "kubernetes.io/service-account-token":
                continue
            obj = _clean(kind, obj)
            obj["apiVersion"], obj["kind"] = api_version, kind
            out.append((noun, obj))
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
        claims = kube.call(kube.core.list_namespaced_persistent_volume_claim, namespace)["items"]
        return [namespace] if claims else []

    def inject(self, kube, namespace, target=None, timeout: float = 180.0, **options) -> list[str]:
        """Redeploy the namespace; return the 'Kind/name' of every object created again."""
        self.check_target(kube, namespace, target or namespace)
        objects = snapshot(kube, namespace)
        ns = kube.call(kube.core.read_namespace, namespace)
        kube.call(kube.core.delete_namespace, namespace)
        kube.wait_namespace_gone(namespace, timeout)
        kube.call(kube.core.create_namespace, {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": namespace, "labels": ns["metadata"].get("labels") or {},
            "annotations": ns["metadata"].get("annotations") or {}}})
        created = []
        for noun, obj in objects:
            client = getattr(kube, _api_of(noun))
            kube.call(getattr(client, f"create_namespaced_{noun}"), namespace, obj)
            created.append(f"{obj['kind']}/{obj['metadata']['name']}")
        return created

    def recover(self, kube, namespace, target=None, **options) -> list[str]:
        """Clear the stale claimRef of the namespace's Released PVs so the new claims bind; return the PV names."""
        freed = []
        for pv in kube.call(kube.core.list_persistent_volume)["items"]:
            ref = pv["spec"].get("claimRef") or {}
            if pv.get("status", {}).get("phase") == "Released" and ref.get("namespace") == namespace:
                kube.patch(kube.core.patch_persistent_volume, pv["metadata"]["name"],
                           body={"spec": {"claimRef": None}}, kind="merge")
                freed.append(pv["metadata"]["name"])
        return freed


def _api_of(noun: str) -> str:
    """Return the Kube attribute whose API creates objects of a method noun."""
    return next(api for api, n, _, _ in KINDS if n == noun)
