"""Table rows for cluster state: nodes, namespaces, events, storage, quotas, leases, revisions, autoscalers.

Cell formulas follow Kubernetes 1.32 printers.go; quantities are printed as stored (no canonicalisation). Fields the
apiserver always defaults (PV reclaim policy and phase, volumeMode, HPA minReplicas and CPU target) are read with
those defaults.
"""

from __future__ import annotations

from aoi.twin.api.printers import age, name, since

_ROLE_PREFIX = "node-role.kubernetes.io/"
_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))


def _node_address(status: dict, kind: str) -> str:
    return next((a.get("address", "") for a in status.get("addresses") or [] if a.get("type") == kind), "<none>")


def node_cells(obj: dict, now: float) -> list:
    """Return Name, Status, Roles, Age, Version and the wide Internal-IP, External-IP, OS, kernel and runtime."""
    status, labels = obj.get("status") or {}, (obj.get("metadata") or {}).get("labels") or {}
    ready = {c.get("type"): c.get("status") for c in status.get("conditions") or []}.get("Ready")
    states = ["Unknown" if ready is None else "Ready" if ready == "True" else "NotReady"]
    if (obj.get("spec") or {}).get("unschedulable"):
        states.append("SchedulingDisabled")
    roles = {k[len(_ROLE_PREFIX):] for k in labels if k.startswith(_ROLE_PREFIX) and len(k) > len(_ROLE_PREFIX)}
    roles |= {labels["kubernetes.io/role"]} if labels.get("kubernetes.io/role") else set()
    info = status.get("nodeInfo") or {}
    return [name(obj), ",".join(states), ",".join(sorted(roles)) or "<none>", age(obj, now),
            info.get("kubeletVersion", ""), _node_address(status, "InternalIP"), _node_address(status, "ExternalIP"),
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


def namespace_cells(obj: dict, now: float) -> list:
    """Return Name, Status, Age."""
    return [name(obj), (obj.get("status") or {}).get("phase", ""), age(obj, now)]


def event_cells(obj: dict, now: float) -> list:
    """Return Last Seen, Type, Reason, Object, Subobject, Source, Message, First Seen, Count, Name."""
    first = since(obj.get("firstTimestamp") or obj.get("eventTime"), now)
    last = since(obj["lastTimestamp"], now) if obj.get("lastTimestamp") else first
    count = obj.get("count") or 1  # singleton events of the new API carry no count
    if obj.get("series"):
        last, count = since(obj["series"].get("lastObservedTime"), now), obj["series"].get("count", 0)
    involved, source = obj.get("involvedObject") or {}, obj.get("source") or {}
    kind = involved.get("kind", "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    component = source.get("component") or obj.get("reportingComponent", "")
    host = source.get("host") or obj.get("reportingInstance", "")
    return [last, obj.get("type", ""), obj.get("reason", ""), target, involved.get("fieldPath", ""),
            f"{component}, {host}" if host else component, (obj.get("message") or "").strip(), first, count,
            name(obj)]


def access_modes(modes: list[str] | None) -> str:
    """Abbreviate access modes in the fixed order RWO,ROX,RWX,RWOP.

    Example:
        >>> access_modes(["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"])
        'RWO,RWX'
    """
    return ",".join(short for mode, short in _ACCESS_MODES if mode in (modes or []))


def _storage_class(obj: dict) -> str:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return annotations.get(_BETA_CLASS, (obj.get("spec") or {}).get("storageClassName") or "")


def pv_cells(obj: dict, now: float) -> list:
    """Return Name, Capacity, Access Modes, Reclaim Policy, Status, Claim, StorageClass, VolumeAttributesClass,
    Reason, Age, VolumeMode."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    claim = spec.get("claimRef")
    phase = "Terminating" if (obj.get("metadata") or {}).get("deletionTimestamp") else status.get("phase", "Pending")
    return [name(obj), (spec.get("capacity") or {}).get("storage", "0"), access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy", "Retain"), phase,
            f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else "", _storage_class(obj),
            spec.get("volumeAttributesClassName") or "<unset>", status.get("reason", ""), age(obj, now),
            spec.get("volumeMode", "Filesystem")]


def pvc_cells(obj: dict, now: float) -> list:
    """Return Name, Status, Volume, Capacity, Access Modes, StorageClass, VolumeAttributesClass, Age, VolumeMode."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    phase = "Terminating" if (obj.get("metadata") or {}).get("deletionTimestamp") else status.get("phase", "Pending")
    bound = bool(spec.get("volumeName"))  # capacity and modes show only once a volume is named
    capacity = (status.get("capacity") or {}).get("storage", "0") if bound else ""
    return [name(obj), phase, spec.get("volumeName", ""), capacity,
            access_modes(status.get("accessModes")) if bound else "", _storage_class(obj),
            spec.get("volumeAttributesClassName") or "<unset>", age(obj, now), spec.get("volumeMode", "Filesystem")]


def storageclass_cells(obj: dict, now: float) -> list:
    """Return Name (with ` (default)`), Provisioner, ReclaimPolicy, VolumeBindingMode, AllowVolumeExpansion, Age."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    default = "true" in (annotations.get("storageclass.kubernetes.io/is-default-class"),
                         annotations.get("storageclass.beta.kubernetes.io/is-default-class"))
    return [name(obj) + (" (default)" if default else ""), obj.get("provisioner", ""),
            obj.get("reclaimPolicy") or "Delete", obj.get("volumeBindingMode") or "Immediate",
            bool(obj.get("allowVolumeExpansion")), age(obj, now)]


def lease_cells(obj: dict, now: float) -> list:
    """Return Name, Holder, Age."""
    return [name(obj), (obj.get("spec") or {}).get("holderIdentity") or "", age(obj, now)]


def resourcequota_cells(obj: dict, now: float) -> list:
    """Return Name, Age, Request, Limit: `resource: used/hard` pairs, `limits.*` ones under Limit."""
    status = obj.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests, limits = [], []
    for resource in sorted(hard):
        pieces = resource.split(".")
        (limits if len(pieces) > 1 and pieces[0] == "limits" else requests).append(
            f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [name(obj), age(obj, now), ", ".join(requests), ", ".join(limits)]


def controllerrevision_cells(obj: dict, now: float) -> list:
    """Return Name, Controller (`kind.group/name`), Revision, Age."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    owner = next((r for r in refs if r.get("controller")), None)
    controller = "<none>"
    if owner:
        api_version = owner.get("apiVersion", "")
        group = api_version.split("/")[0] if "/" in api_version else ""
        kind = f"{owner.get('kind', '')}.{group}" if group else owner.get("kind", "")
        controller = f"{kind.lower()}/{owner.get('name', '')}" if kind else owner.get("name", "")
    return [name(obj), controller, obj.get("revision", 0), age(obj, now)]


_METRIC_KEYS = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
                "Object": "object", "External": "external"}


def _hpa_metrics(spec: dict, status: dict) -> tuple[list, list]:
    """Return (metric specs, current metrics) in autoscaling/v2 shape, also for autoscaling/v1 objects."""
    if spec.get("metrics") is not None:
        return spec["metrics"], status.get("currentMetrics") or []
    target = spec.get("targetCPUUtilizationPercentage", 80)  # the apiserver defaults a missing target to 80% CPU
    current = status.get("currentCPUUtilizationPercentage")
    metric = {"type": "Resource", "resource": {"name": "cpu", "target": {"averageUtilization": target}}}
    now = [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": current}}}]
    return [metric], now if current is not None else []


def _metric_text(metric: dict, observed: dict | None) -> str:
    key = _METRIC_KEYS.get(metric.get("type"))
    if key is None:
        return "<unknown type>"
    source, seen = metric.get(key) or {}, (observed or {}).get(key)
    target, current = source.get("target") or {}, (seen or {}).get("current") or {}
    prefix = f"{source.get('name', '')}: " if key in ("resource", "containerResource") else ""
    if key == "pods" or target.get("averageValue") is not None:
        suffix = " (avg)" if key in ("object", "external") else ""
        return f"{prefix}{current.get('averageValue', '<unknown>')}/{target.get('averageValue')}{suffix}"
    if key in ("object", "external"):
        return f"{current.get('value', '<unknown>')}/{target.get('value')}"
    used = f"{current['averageUtilization']}%" if current.get("averageUtilization") is not None else "<unknown>"
    goal = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
    return f"{prefix}{used}/{goal}"


def hpa_targets(spec: dict, status: dict) -> str:
    """Format an HPA's metrics as `cpu: 20%/80%, ...`: at most two, then ` + N more...`; `<none>` if none.

    Example:
        >>> hpa_targets({"targetCPUUtilizationPercentage": 50}, {"currentCPUUtilizationPercentage": 12})
        'cpu: 12%/50%'
    """
    metrics, observed = _hpa_metrics(spec, status)
    if not metrics:
        return "<none>"
    texts = [_metric_text(m, observed[i] if i < len(observed) else None) for i, m in enumerate(metrics)]
    more = f" + {len(texts) - 2} more..." if len(texts) > 2 else ""
    return ", ".join(texts[:2]) + more


def hpa_cells(obj: dict, now: float) -> list:
    """Return Name, Reference, Targets, MinPods, MaxPods, Replicas, Age."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    return [name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", hpa_targets(spec, status),
            str(spec.get("minReplicas", 1)), spec.get("maxReplicas", 0), status.get("currentReplicas", 0),
            age(obj, now)]
