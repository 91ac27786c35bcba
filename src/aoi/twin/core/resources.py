"""The API resources the twin serves: names, kinds, scopes, verbs; the source of discovery documents."""

from __future__ import annotations

from dataclasses import dataclass, field

CRUD = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
READ = ("get", "list")


@dataclass(frozen=True)
class Resource:
    """One served resource type, e.g. deployments in apps/v1."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = CRUD
    subresources: tuple[str, ...] = ()
    status: bool = False  # whether a /status subresource exists

    @property
    def api_version(self) -> str:
        """Return the apiVersion string, e.g. 'apps/v1' or 'v1'."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """Return 'plural' for core resources and 'plural.group' otherwise (used in messages and RBAC)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _r(group, version, plural, kind, namespaced=True, short=(), cats=(), verbs=CRUD, subs=(), status=False):
    singular = kind.lower()
    return Resource(group, version, plural, singular, kind, namespaced, tuple(short), tuple(cats), tuple(verbs),
                    tuple(subs), status)


ALL = ("all",)
RESOURCES: tuple[Resource, ...] = (
    _r("", "v1", "pods", "Pod", short=["po"], cats=ALL, subs=["log", "exec", "status", "eviction"], status=True),
    _r("", "v1", "services", "Service", short=["svc"], cats=ALL, subs=["status", "proxy"], status=True),
    _r("", "v1", "endpoints", "Endpoints", short=["ep"]),
    _r("", "v1", "configmaps", "ConfigMap", short=["cm"]),
    _r("", "v1", "secrets", "Secret"),
    _r("", "v1", "serviceaccounts", "ServiceAccount", short=["sa"], subs=["token"]),
    _r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", short=["pvc"], subs=["status"], status=True),
    _r("", "v1", "events", "Event", short=["ev"]),
    _r("", "v1", "replicationcontrollers", "ReplicationController", short=["rc"], cats=ALL,
       subs=["scale", "status"], status=True),
    _r("", "v1", "resourcequotas", "ResourceQuota", short=["quota"], subs=["status"], status=True),
    _r("", "v1", "limitranges", "LimitRange", short=["limits"]),
    _r("", "v1", "namespaces", "Namespace", namespaced=False, short=["ns"], subs=["status", "finalize"], status=True,
       verbs=("create", "delete", "get", "list", "patch", "update", "watch")),
    _r("", "v1", "nodes", "Node", namespaced=False, short=["no"], subs=["status", "proxy"], status=True),
    _r("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False, short=["pv"], subs=["status"],
       status=True),
    _r("apps", "v1", "deployments", "Deployment", short=["deploy"], cats=ALL, subs=["scale", "status"], status=True),
    _r("apps", "v1", "replicasets", "ReplicaSet", short=["rs"], cats=ALL, subs=["scale", "status"], status=True),
    _r("apps", "v1", "statefulsets", "StatefulSet", short=["sts"], cats=ALL, subs=["scale", "status"], status=True),
    _r("apps", "v1", "daemonsets", "DaemonSet", short=["ds"], cats=ALL, subs=["status"], status=True),
    _r("apps", "v1", "controllerrevisions", "ControllerRevision"),
    _r("batch", "v1", "jobs", "Job", cats=ALL, subs=["status"], status=True),
    _r("batch", "v1", "cronjobs", "CronJob", short=["cj"], cats=ALL, subs=["status"], status=True),
    _r("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", short=["hpa"], cats=ALL,
       subs=["status"], status=True),
    _r("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
    _r("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short=["netpol"]),
    _r("networking.k8s.io", "v1", "ingresses", "Ingress", short=["ing"], subs=["status"], status=True),
    _r("networking.k8s.io", "v1", "ingressclasses", "IngressClass", namespaced=False),
    _r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short=["pdb"], subs=["status"], status=True),
    _r("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False, short=["pc"]),
    _r("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False,
       short=["crd", "crds"], subs=["status"], status=True),
    _r("coordination.k8s.io", "v1", "leases", "Lease"),
    _r("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False, short=["sc"]),
    _r("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    _r("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    _r("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    _r("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False),
    _r("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", namespaced=False,
       verbs=("create",)),
    _r("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", namespaced=False,
       verbs=("create",)),
    _r("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", namespaced=False,
       verbs=("create",)),
    _r("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", verbs=READ),
    _r("metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", namespaced=False, verbs=READ),
    _r("chaos-mesh.org", "v1alpha1", "podchaos", "PodChaos", subs=["status"], status=True),
    _r("chaos-mesh.org", "v1alpha1", "networkchaos", "NetworkChaos", subs=["status"], status=True),
)

# Subresource kinds that differ from the parent's kind.
SUBRESOURCE_KINDS = {
    "scale": ("autoscaling", "v1", "Scale"),
    "eviction": ("policy", "v1", "Eviction"),
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
}
SUBRESOURCE_VERBS = {
    "log": ("get",), "exec": ("create", "get"), "status": ("get", "patch", "update"),
    "scale": ("get", "patch", "update"), "eviction": ("create",), "token": ("create",),
    "proxy": ("create", "delete", "get", "patch", "update"), "finalize": ("update",),
}


@dataclass(eq=False)  # compared and hashed by identity: one catalog per process
class Catalog:
    """Lookup tables over RESOURCES."""

    resources: tuple[Resource, ...] = RESOURCES
    by_path: dict[tuple[str, str, str], Resource] = field(default_factory=dict)
    by_kind: dict[tuple[str, str], Resource] = field(default_factory=dict)

    def __post_init__(self):
        for res in self.resources:
            self.by_path[(res.group, res.version, res.plural)] = res
            self.by_kind.setdefault((res.api_version, res.kind), res)

    def find(self, group: str, version: str, plural: str) -> Resource | None:
        """Return the resource served at /apis/<group>/<version>/<plural>, or None."""
        return self.by_path.get((group, version, plural))

    def for_object(self, obj: dict) -> Resource | None:
        """Return the resource that stores objects with this apiVersion and kind."""
        return self.by_kind.get((obj.get("apiVersion", ""), obj.get("kind", "")))

    def groups(self) -> dict[str, list[str]]:
        """Return group -> versions, in serving order (the core group is '')."""
        out: dict[str, list[str]] = {}
        for res in self.resources:
            versions = out.setdefault(res.group, [])
            if res.version not in versions:
                versions.append(res.version)
        return out

    def in_version(self, group: str, version: str) -> list[Resource]:
        """Return the resources of one group-version."""
        return [r for r in self.resources if r.group == group and r.version == version]


CATALOG = Catalog()
