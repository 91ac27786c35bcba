"""The probe and executor identities as Kubernetes RBAC manifests: the same objects on the twin and a real cluster."""

from __future__ import annotations

import yaml

IDENTITY_NAMESPACE = "aoi"
READ = ["get", "list", "watch"]
WRITE = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]

# Everything an investigator may read. Secrets are left out on purpose: reading them is not diagnosis.
READABLE = {
    "": ["pods", "pods/log", "services", "endpoints", "configmaps", "serviceaccounts", "persistentvolumeclaims",
         "events", "replicationcontrollers", "resourcequotas", "limitranges", "namespaces", "nodes",
         "persistentvolumes"],
    "apps": ["deployments", "replicasets", "statefulsets", "daemonsets", "controllerrevisions"],
    "batch": ["jobs", "cronjobs"],
    "autoscaling": ["horizontalpodautoscalers"],
    "discovery.k8s.io": ["endpointslices"],
    "networking.k8s.io": ["networkpolicies", "ingresses", "ingressclasses"],
    "policy": ["poddisruptionbudgets"],
    "scheduling.k8s.io": ["priorityclasses"],
    "apiextensions.k8s.io": ["customresourcedefinitions"],
    "coordination.k8s.io": ["leases"],
    "storage.k8s.io": ["storageclasses"],
    "rbac.authorization.k8s.io": ["roles", "rolebindings", "clusterroles", "clusterrolebindings"],
    "chaos-mesh.org": ["podchaos", "networkchaos"],
}
# What the executor may change inside an app namespace.
WRITABLE = {
    "": ["pods", "pods/exec", "pods/log", "pods/eviction", "services", "endpoints", "configmaps", "secrets",
         "serviceaccounts", "persistentvolumeclaims"],
    "apps": ["deployments", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets",
             "statefulsets/scale", "daemonsets"],
    "batch": ["jobs", "cronjobs"],
    "autoscaling": ["horizontalpodautoscalers"],
    "networking.k8s.io": ["networkpolicies", "ingresses"],
    "policy": ["poddisruptionbudgets"],
    "chaos-mesh.org": ["podchaos", "networkchaos"],
}
# Cluster-scoped changes the executor needs for repairs; never delete, never RBAC.
CLUSTER_WRITABLE = [
    {"apiGroups": [""], "resources": ["persistentvolumes"],
     "verbs": ["get", "list", "watch", "create", "update", "patch"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch", "create"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch"]},
]


def _rules(table: dict[str, list[str]], verbs: list[str]) -> list[dict]:
    """Turn {group: resources} into RBAC rules."""
    return [{"apiGroups": [group], "resources": list(resources), "verbs": list(verbs)}
            for group, resources in table.items()]


def _metrics_rule() -> dict:
    return {"apiGroups": ["metrics.k8s.io"], "resources": ["pods", "nodes"], "verbs": ["get", "list"]}


def _meta(name: str, namespace: str | None = None) -> dict:
    meta = {"name": name, "labels": {"app.kubernetes.io/part-of": "aoi"}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _binding(kind: str, name: str, role_kind: str, role: str, sa: str, namespace: str | None = None) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": _meta(name, namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": IDENTITY_NAMESPACE}]}


def manifests(app_namespaces: list[str]) -> list[dict]:
    """Return the namespace, service accounts, roles and bindings for the probe and executor identities.

    Example:
        >>> [m["kind"] for m in manifests(["test-hotel-reservation"])][:3]
        ['Namespace', 'ServiceAccount', 'ServiceAccount']
    """
    docs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(IDENTITY_NAMESPACE)},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("probe", IDENTITY_NAMESPACE)},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("executor", IDENTITY_NAMESPACE)},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta("aoi-probe"),
             "rules": _rules(READABLE, READ) + [_metrics_rule()]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta("aoi-executor"),
             "rules": _rules(WRITABLE, WRITE)},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "metadata": _meta("aoi-executor-cluster"), "rules": CLUSTER_WRITABLE},
            _binding("ClusterRoleBinding", "aoi-probe", "ClusterRole", "aoi-probe", "probe"),
            _binding("ClusterRoleBinding", "aoi-executor-read", "ClusterRole", "aoi-probe", "executor"),
            _binding("ClusterRoleBinding", "aoi-executor-cluster", "ClusterRole", "aoi-executor-cluster", "executor")]
    for ns in app_namespaces:
        docs.append(_binding("RoleBinding", "aoi-executor", "ClusterRole", "aoi-executor", "executor", ns))
    return docs


def render(app_namespaces: list[str]) -> str:
    """Return the manifests as one multi-document YAML text."""
    return yaml.safe_dump_all(manifests(app_namespaces), sort_keys=False)


def user_of(service_account: str) -> str:
    """Return the RBAC user name of an identity, e.g. system:serviceaccount:aoi:probe."""
    return f"system:serviceaccount:{IDENTITY_NAMESPACE}:{service_account}"
