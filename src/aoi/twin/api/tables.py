"""Server-side printing: turn API objects into the meta.k8s.io/v1 Table that `kubectl get` renders.

kubectl 1.32 has no printers of its own; it asks for `as=Table` and prints the cells it is given. The column sets
follow Kubernetes 1.32 `pkg/printers/internalversion/printers.go`, rendered as a real apiserver does (every wide
column filled). Resources it has no printer for fall back to `Name, Created At` (built-ins) or `Name, Age` (custom
resources), as the generic and the CRD table convertors do.
"""

from __future__ import annotations

from aoi.twin.api import printers_cluster as cluster
from aoi.twin.api import printers_config as config
from aoi.twin.api import printers_policy as policy
from aoi.twin.api import printers_workloads as work
from aoi.twin.api.printers import (
    AGE,
    CONTAINERS,
    IMAGES,
    NAME,
    SELECTOR,
    Printer,
    age,
    column,
    human_duration,
    name,
)
from aoi.twin.core.clock import parse_time, rfc3339

__all__ = ["render_table", "human_duration", "PRINTERS"]

_WORKLOAD_WIDE = (CONTAINERS, IMAGES, SELECTOR)
_REPLICA_COUNTS = (
    column("Desired", "Number of replicas asked for.", "integer"),
    column("Current", "Number of replicas that exist.", "integer"),
    column("Ready", "Number of replicas that are ready.", "integer"),
)
_STORAGE_CLASS = column("StorageClass", "Storage class of the volume.")
_ATTRIBUTES_CLASS = column("VolumeAttributesClass", "Volume attributes class of the volume.")
_VOLUME_MODE = column("VolumeMode", "Whether the volume holds a filesystem or a raw block device.", wide=True)
_BINDING = (
    NAME, column("Role", "The role this binding grants, as Kind/name."), AGE,
    column("Users", "Users the binding applies to.", wide=True),
    column("Groups", "Groups the binding applies to.", wide=True),
    column("ServiceAccounts", "Service accounts the binding applies to, as namespace/name.", wide=True),
)

PRINTERS: dict[str, Printer] = {
    "pods": Printer((
        NAME, column("Ready", "Ready containers out of all containers."),
        column("Status", "Summary of the pod's phase and container states."),
        column("Restarts", "Container restarts, with how long ago the last one happened."), AGE,
        column("IP", "The pod's IP address.", wide=True), column("Node", "The node the pod runs on.", wide=True),
        column("Nominated Node", "The node picked for the pod by preemption.", wide=True),
        column("Readiness Gates", "Readiness gates that are met out of all gates.", wide=True),
    ), work.pod_cells, work.pod_conditions),
    "deployments.apps": Printer((
        NAME, column("Ready", "Ready replicas out of desired replicas."),
        column("Up-to-date", "Replicas running the current template."),
        column("Available", "Replicas available to serve."), AGE, *_WORKLOAD_WIDE,
    ), work.deployment_cells),
    "replicasets.apps": Printer((NAME, *_REPLICA_COUNTS, AGE, *_WORKLOAD_WIDE), work.replicaset_cells),
    "replicationcontrollers": Printer((NAME, *_REPLICA_COUNTS, AGE, *_WORKLOAD_WIDE),
                                      work.replicationcontroller_cells),
    "statefulsets.apps": Printer((NAME, column("Ready", "Ready replicas out of desired replicas."), AGE,
                                  CONTAINERS, IMAGES), work.statefulset_cells),
    "daemonsets.apps": Printer((
        NAME, column("Desired", "Nodes that should run the daemon pod.", "integer"),
        column("Current", "Nodes that run the daemon pod.", "integer"),
        column("Ready", "Nodes whose daemon pod is ready.", "integer"),
        column("Up-to-date", "Nodes that run the current template.", "integer"),
        column("Available", "Nodes whose daemon pod is available.", "integer"),
        column("Node Selector", "Labels a node needs to run the pod."), AGE, *_WORKLOAD_WIDE,
    ), work.daemonset_cells),
    "jobs.batch": Printer((
        NAME, column("Status", "Whether the job runs, completed, failed or is suspended."),
        column("Completions", "Succeeded pods out of required completions."),
        column("Duration", "How long the job ran or has been running."), AGE, *_WORKLOAD_WIDE,
    ), work.job_cells),
    "cronjobs.batch": Printer((
        NAME, column("Schedule", "The cron schedule."), column("Timezone", "Time zone of the schedule."),
        column("Suspend", "Whether new runs are suspended.", "boolean"),
        column("Active", "Number of jobs running now.", "integer"),
        column("Last Schedule", "How long ago a job was last scheduled."), AGE, *_WORKLOAD_WIDE,
    ), work.cronjob_cells),
    "services": Printer((
        NAME, column("Type", "How the service is exposed."), column("Cluster-IP", "The service's cluster IP."),
        column("External-IP", "Addresses that reach the service from outside the cluster."),
        column("Port(s)", "Service ports, with node ports where allocated."), AGE,
        column("Selector", "Labels of the pods behind the service.", wide=True),
    ), config.service_cells),
    "endpoints": Printer((NAME, column("Endpoints", "Ready addresses, as ip:port."), AGE), config.endpoints_cells),
    "endpointslices.discovery.k8s.io": Printer((
        NAME, column("AddressType", "The kind of addresses in the slice."), column("Ports", "Ports of the slice."),
        column("Endpoints", "Addresses in the slice."), AGE,
    ), config.endpointslice_cells),
    "configmaps": Printer((NAME, column("Data", "Number of data keys."), AGE), config.configmap_cells),
    "secrets": Printer((NAME, column("Type", "The secret's type."), column("Data", "Number of data keys."), AGE),
                       config.secret_cells),
    "serviceaccounts": Printer((NAME, column("Secrets", "Number of secrets listed."), AGE),
                               config.serviceaccount_cells),
    "rolebindings.rbac.authorization.k8s.io": Printer(_BINDING, config.rolebinding_cells),
    "clusterrolebindings.rbac.authorization.k8s.io": Printer(_BINDING, config.rolebinding_cells),
    "namespaces": Printer((NAME, column("Status", "The namespace's phase."), AGE), cluster.namespace_cells),
    "nodes": Printer((
        NAME, column("Status", "Readiness of the node."), column("Roles", "Roles from node-role labels."), AGE,
        column("Version", "Kubelet version."), column("Internal-IP", "The node's internal address.", wide=True),
        column("External-IP", "The node's external address.", wide=True),
        column("OS-Image", "Operating system image.", wide=True),
        column("Kernel-Version", "Kernel version.", wide=True),
        column("Container-Runtime", "Container runtime and its version.", wide=True),
    ), cluster.node_cells),
    "events": Printer((
        column("Last Seen", "How long ago the event last occurred."), column("Type", "Normal or Warning."),
        column("Reason", "Short machine-readable reason."), column("Object", "The object the event is about."),
        column("Subobject", "The part of the object, such as a container.", wide=True),
        column("Source", "The component and host that reported it.", wide=True),
        column("Message", "What happened, for humans."),
        column("First Seen", "How long ago the event first occurred.", wide=True),
        column("Count", "How many times it occurred.", wide=True),
        column("Name", "The event's name.", wide=True, format="name"),
    ), cluster.event_cells),
    "persistentvolumes": Printer((
        NAME, column("Capacity", "Storage size."), column("Access Modes", "How the volume can be mounted."),
        column("Reclaim Policy", "What happens to the volume after release."), column("Status", "Volume phase."),
        column("Claim", "The claim bound to the volume, as namespace/name."), _STORAGE_CLASS, _ATTRIBUTES_CLASS,
        column("Reason", "Why the volume is in its phase."), AGE, _VOLUME_MODE,
    ), cluster.pv_cells),
    "persistentvolumeclaims": Printer((
        NAME, column("Status", "Claim phase."), column("Volume", "The volume bound to the claim."),
        column("Capacity", "Storage size of the bound volume."),
        column("Access Modes", "How the bound volume can be mounted."), _STORAGE_CLASS, _ATTRIBUTES_CLASS, AGE,
        _VOLUME_MODE,
    ), cluster.pvc_cells),
    "storageclasses.storage.k8s.io": Printer((
        NAME, column("Provisioner", "The volume plugin that provisions volumes."),
        column("ReclaimPolicy", "Reclaim policy of provisioned volumes."),
        column("VolumeBindingMode", "When volumes are bound and provisioned."),
        column("AllowVolumeExpansion", "Whether volumes can be resized."), AGE,
    ), cluster.storageclass_cells),
    "leases.coordination.k8s.io": Printer((NAME, column("Holder", "Who holds the lease."), AGE), cluster.lease_cells),
    "resourcequotas": Printer((
        NAME, AGE, column("Request", "Used and hard amounts of requested resources."),
        column("Limit", "Used and hard amounts of resource limits."),
    ), cluster.resourcequota_cells),
    "controllerrevisions.apps": Printer((
        NAME, column("Controller", "The object that owns the revision."),
        column("Revision", "The revision number."), AGE,
    ), cluster.controllerrevision_cells),
    "horizontalpodautoscalers.autoscaling": Printer((
        NAME, column("Reference", "The scaled object, as Kind/name."),
        column("Targets", "Current and target metric values."), column("MinPods", "Lowest replica count."),
        column("MaxPods", "Highest replica count."), column("Replicas", "Current replica count."), AGE,
    ), cluster.hpa_cells),
}

PRINTERS.update(policy.PRINTERS)

# Built-ins without a printer use the generic convertor: the creation time as an RFC 3339 date.
def _created_at(obj: dict, now: float) -> list:
    created = parse_time(obj.get("metadata", {}).get("creationTimestamp"))
    return [name(obj), "0001-01-01T00:00:00Z" if created is None else rfc3339(created)]  # Go's zero time


_CREATED_AT = Printer((NAME, column("Created At", "When the object was created.", "date")), _created_at)
for _resource in ("roles.rbac.authorization.k8s.io", "clusterroles.rbac.authorization.k8s.io", "limitranges",
                  "customresourcedefinitions.apiextensions.k8s.io"):
    PRINTERS[_resource] = _CREATED_AT

# Custom resources without printer columns get the CRD convertor's default: Name and a date-typed Age.
_CUSTOM = Printer((NAME, column("Age", "How long ago the object was created.", "date")),
                  lambda obj, now: [name(obj), age(obj, now)])

_INCLUDE_OBJECT = ("Metadata", "Object", "None")


def _row_object(obj: dict, include_object: str) -> dict | None:
    if include_object == "Object":
        return obj
    if include_object == "None":
        return None
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def render_table(resource: str, objects: list[dict], now: float, *, include_object: str = "Metadata") -> dict:
    """Render objects of one resource as a meta.k8s.io/v1 Table (the server adds metadata.resourceVersion).

    Args:
        resource: plural name, with `.<group>` for non-core groups ("pods", "deployments.apps"); an unknown
            resource gets the custom-resource `Name, Age` table.
        objects: full API objects, in the order the rows should appear.
        now: the twin clock's epoch seconds; every age is measured from it.
        include_object: what each row carries: "Metadata" (PartialObjectMetadata), "Object" or "None".

    Raises:
        ValueError: include_object is not one of the three values (the server answers 400 with the message).

    Example:
        >>> pod = {"metadata": {"name": "geo", "creationTimestamp": "1970-01-01T00:00:00Z"},
        ...        "spec": {"containers": [{"name": "geo"}]}, "status": {"phase": "Pending"}}
        >>> render_table("pods", [pod], 300.0)["rows"][0]["cells"][:5]
        ['geo', '0/1', 'Pending', '0', '5m']
    """
    if include_object not in _INCLUDE_OBJECT:
        raise ValueError(f'unrecognized includeObject value: "{include_object}"')
    printer = PRINTERS.get(resource, _CUSTOM)
    rows = []
    for obj in objects:
        row = {"cells": printer.cells(obj, now), "object": _row_object(obj, include_object)}
        conditions = printer.conditions(obj) if printer.conditions else None
        if conditions:
            row["conditions"] = conditions
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
            "columnDefinitions": [dict(c) for c in printer.columns], "rows": rows}
