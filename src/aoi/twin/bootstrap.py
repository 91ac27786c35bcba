"""What a fresh kind cluster has before any app: nodes, leases, system namespaces, the API Service, identities."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aoi import rbac
from aoi.twin.controllers.base import Controller
from aoi.twin.core import operations
from aoi.twin.core.clock import rfc3339, rfc3339_micro

if TYPE_CHECKING:
    from aoi.twin.twin import Twin

KUBE_VERSION = "v1.32.0"
NODES = (("kind-control-plane", "172.18.0.2", "10.244.0.0/24", True),
         ("kind-worker", "172.18.0.3", "10.244.1.0/24", False))
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
LEASE_SECONDS = 10.0
CONDITIONS = (("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
              ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
              ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
              ("Ready", "True", "KubeletReady", "kubelet is posting ready status"))


def node_object(twin: Twin, name: str, ip: str, cidr: str, control_plane: bool) -> dict:
    """Return a kind node as the kubelet registers it."""
    now = rfc3339(twin.clock.now())
    labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    spec = {"podCIDR": cidr, "podCIDRs": [cidr], "providerID": f"kind://docker/kind/{name}"}
    if control_plane:
        labels.update({"node-role.kubernetes.io/control-plane": "",
                       "node.kubernetes.io/exclude-from-external-load-balancers": ""})
        spec["taints"] = [{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]
    resources = {"cpu": "8", "ephemeral-storage": "259961464Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                 "memory": "32827024Ki", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": name, "labels": labels, "annotations": {
            "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
            "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": spec,
        "status": {"addresses": [{"address": ip, "type": "InternalIP"}, {"address": name, "type": "Hostname"}],
                   "allocatable": dict(resources), "capacity": dict(resources),
                   "conditions": [{"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": now,
                                   "lastTransitionTime": now} for t, s, r, m in CONDITIONS],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                   "nodeInfo": {"architecture": "amd64", "bootID": twin.ids.uid(),
                                "containerRuntimeVersion": "containerd://1.7.24", "kernelVersion": "6.8.0-1017-gcp",
                                "kubeProxyVersion": KUBE_VERSION, "kubeletVersion": KUBE_VERSION,
                                "machineID": twin.ids.uid().replace("-", ""), "operatingSystem": "linux",
                                "osImage": "Debian GNU/Linux 12 (bookworm)", "systemUUID": twin.ids.uid()}}}


class NodeLeases(Controller):
    """Renew each node's Lease every 10 simulated seconds, as the kubelet does."""

    name = "node-lease"

    def reconcile(self, twin, key):
        lease = twin.get("leases", "kube-node-lease", key[1])
        if lease is not None:
            lease["spec"]["renewTime"] = rfc3339_micro(twin.clock.now())
            twin.update("leases", lease)
        twin.schedule(LEASE_SECONDS, self.name, key)


PRIORITY_CLASSES = (
    ("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be "
                                            "moved to another node if necessary."),
    ("system-node-critical", 2000001000,
     "Used for system critical pods that must not be moved from their current node."),
)


def custom_resource_definition(res) -> dict:
    """Return the CRD that makes a custom resource served (as its installer would have applied it)."""
    names = {"kind": res.kind, "listKind": f"{res.kind}List", "plural": res.plural, "singular": res.singular}
    version = {"name": res.version, "served": True, "storage": True, "subresources": {"status": {}},
               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    return {"metadata": {"name": res.key}, "spec": {"group": res.group, "names": names, "versions": [version],
                                                     "scope": "Namespaced" if res.namespaced else "Cluster"}}


def builtin_objects(twin: Twin) -> None:
    """Create what every cluster has besides nodes: the system PriorityClasses and the CRDs of custom resources."""
    for name, value, description in PRIORITY_CLASSES:
        operations.create(twin, twin.resource("priorityclasses"), "", {
            "metadata": {"name": name}, "value": value, "globalDefault": False, "description": description})
    for res in twin.catalog.resources:
        if "." in res.group and not res.group.endswith(".k8s.io"):
            operations.create(twin, twin.resource("customresourcedefinitions"), "", custom_resource_definition(res))


def bootstrap(twin: Twin) -> None:
    """Create the nodes, system namespaces, node leases and the API server's Endpoints."""
    create = lambda kind, obj, ns="": operations.create(twin, twin.resource(kind), ns, obj)  # noqa: E731
    for ns in SYSTEM_NAMESPACES:
        create("namespaces", {"metadata": {"name": ns}})
    for name, ip, cidr, cp in NODES:
        create("nodes", node_object(twin, name, ip, cidr, cp))
        create("leases", {"metadata": {"name": name, "namespace": "kube-node-lease"},
                          "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                                   "renewTime": rfc3339_micro(twin.clock.now())}}, "kube-node-lease")
        twin.schedule(LEASE_SECONDS, NodeLeases.name, ("kube-node-lease", name))
    builtin_objects(twin)
    create("endpoints", {"metadata": {"name": "kubernetes", "namespace": "default",
                                      "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                         "subsets": [{"addresses": [{"ip": NODES[0][1]}],
                                      "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]}, "default")


def install_identities(twin: Twin, app_namespaces: list[str]) -> None:
    """Apply the probe and executor RBAC manifests (the same ones `aoi rbac` prints for a real cluster)."""
    for doc in rbac.manifests(app_namespaces):
        operations.create(twin, twin.resource(doc["kind"]), doc["metadata"].get("namespace", ""), doc)
