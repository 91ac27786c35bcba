"""Defaulting and validation on every write, as the API server's registry strategies do."""

from __future__ import annotations

import base64
import re

from aoi.twin.core.cron import parse_schedule
from aoi.twin.core.errors import ApiError, invalid
from aoi.twin.core.quantity import canonical_map
from aoi.twin.core.resources import Resource
from aoi.twin.core.structure import structure

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_NAMED = {"Namespace", "Service"}  # kinds whose names must be DNS-1123 labels
PERCENT = re.compile(r"^[0-9]+%$")
ROLLED = ("Deployment", "StatefulSet", "DaemonSet")  # kinds with rolling update parameters


def default_container(c: dict) -> None:
    """Fill the container fields the API server defaults."""
    image = c.get("image", "")
    tag = image.rsplit("/", 1)[-1]
    latest = ":" not in tag or tag.endswith(":latest")
    c.setdefault("imagePullPolicy", "Always" if latest and "@" not in image else "IfNotPresent")
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    resources = c.setdefault("resources", {})
    for key in ("requests", "limits"):
        if key in resources:
            resources[key] = canonical_map(resources[key])
    for port in c.get("ports") or []:
        port.setdefault("protocol", "TCP")


def default_pod_spec(spec: dict) -> None:
    """Fill the pod spec fields the API server defaults (also used for templates)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("terminationGracePeriodSeconds", 30)
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        default_container(c)
    for vol in spec.get("volumes") or []:
        for key in ("configMap", "secret"):
            if key in vol:
                vol[key].setdefault("defaultMode", 420)


def _template(obj: dict) -> None:
    """Default a workload's pod template (its zero creationTimestamp serializes as null, as in Go)."""
    tmpl = obj.setdefault("spec", {}).setdefault("template", {})
    tmpl.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    default_pod_spec(tmpl.setdefault("spec", {}))


def _deployment(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        strategy.setdefault("rollingUpdate", {"maxSurge": "25%", "maxUnavailable": "25%"})
    _template(obj)


def _statefulset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    _template(obj)


def _daemonset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("updateStrategy", {"type": "RollingUpdate",
                                       "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}})
    _template(obj)


def _replicaset(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template(obj)


def _job(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    for key, value in (("backoffLimit", 6), ("completions", 1), ("parallelism", 1),
                       ("completionMode", "NonIndexed"), ("suspend", False),
                       ("podReplacementPolicy", "TerminatingOrFailed")):
        spec.setdefault(key, value)
    _template(obj)


def _cronjob(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job = spec.setdefault("jobTemplate", {})
    job.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    _job(job)


def _pod(obj: dict) -> None:
    default_pod_spec(obj.setdefault("spec", {}))
    for c in (obj["spec"].get("initContainers") or []) + (obj["spec"].get("containers") or []):
        limits = (c.get("resources") or {}).get("limits") or {}
        if limits:  # a limit without a request requests the limit (SetDefaults_Pod)
            c["resources"]["requests"] = {**limits, **(c["resources"].get("requests") or {})}
    obj["spec"].setdefault("serviceAccountName", "default")
    obj["spec"].setdefault("enableServiceLinks", True)
    obj["spec"].setdefault("priority", 0)
    obj.setdefault("status", {}).setdefault("phase", "Pending")


def _secret(obj: dict) -> None:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None) or {}
    data = obj.setdefault("data", {}) if string_data else obj.get("data")
    for key, value in string_data.items():
        data[key] = base64.b64encode(str(value).encode()).decode()


def _namespace(obj: dict) -> None:
    name = obj["metadata"]["name"]
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")


def _pv(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec["capacity"] = canonical_map(spec.get("capacity") or {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    obj.setdefault("status", {}).setdefault("phase", "Pending")


def _pvc(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    resources = obj["spec"].get("resources") or {}
    for key in ("requests", "limits"):
        if key in resources:
            resources[key] = canonical_map(resources[key])
    obj.setdefault("status", {}).setdefault("phase", "Pending")


def _priorityclass(obj: dict) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _networkpolicy(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("podSelector", {})
    spec.setdefault("policyTypes", ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"])


DEFAULTERS = {"Deployment": _deployment, "ReplicaSet": _replicaset, "StatefulSet": _statefulset,
              "DaemonSet": _daemonset, "Job": _job, "CronJob": _cronjob, "Pod": _pod, "Secret": _secret,
              "Namespace": _namespace, "PersistentVolume": _pv, "PersistentVolumeClaim": _pvc,
              "PriorityClass": _priorityclass, "NetworkPolicy": _networkpolicy}


def _name_causes(res: Resource, name: str) -> list[tuple[str, str]]:
    """Validate metadata.name."""
    pattern = DNS_LABEL if res.kind in LABEL_NAMED else DNS_SUBDOMAIN
    limit = 63 if res.kind in LABEL_NAMED else 253
    if not name:
        return [("metadata.name", "Required value: name or generateName is required")]
    if len(name) > limit or not pattern.match(name):
        return [("metadata.name", f'Invalid value: "{name}": a lowercase RFC 1123 '
                 f'{"label" if res.kind in LABEL_NAMED else "subdomain"} must consist of lower case alphanumeric '
                 "characters, '-' or '.', and must start and end with an alphanumeric character")]
    return []


def _containers_causes(spec: dict, prefix: str) -> list[tuple[str, str]]:
    """Validate the containers of a pod spec."""
    containers = spec.get("containers") or []
    if not containers:
        return [(f"{prefix}.containers", "Required value")]
    causes = []
    for i, c in enumerate(containers):
        if not c.get("name"):
            causes.append((f"{prefix}.containers[{i}].name", "Required value"))
        if not c.get("image"):
            causes.append((f"{prefix}.containers[{i}].image", "Required value"))
    return causes


def _workload_causes(obj: dict) -> list[tuple[str, str]]:
    """Validate replicas, selector and template of a workload."""
    from aoi.twin.core.selectors import selector_matches  # local: selectors imports nothing from here

    spec = obj.get("spec") or {}
    causes = []
    replicas = spec.get("replicas", 1)
    if isinstance(replicas, int) and replicas < 0:
        causes.append(("spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0"))
    tmpl = spec.get("template") or {}
    labels = (tmpl.get("metadata") or {}).get("labels") or {}
    if obj["kind"] != "Job":
        if not spec.get("selector"):
            causes.append(("spec.selector", "Required value"))
        elif not selector_matches(spec["selector"], labels):
            causes.append(("spec.template.metadata.labels",
                           f"Invalid value: {labels}: `selector` does not match template `labels`"))
    return causes + _containers_causes(tmpl.get("spec") or {}, "spec.template.spec")


def _service_causes(obj: dict) -> list[tuple[str, str]]:
    """Validate service ports."""
    causes = []
    for i, port in enumerate((obj.get("spec") or {}).get("ports") or []):
        number = port.get("port")
        if not isinstance(number, int) or not 0 < number < 65536:
            causes.append((f"spec.ports[{i}].port", f"Invalid value: {number}: must be between 1 and 65535, inclusive"))
        target = port.get("targetPort")
        if isinstance(target, int) and not 0 < target < 65536:
            causes.append((f"spec.ports[{i}].targetPort",
                           f"Invalid value: {target}: must be between 1 and 65535, inclusive"))
    return causes


def _int_or_percent(field: str, value) -> list[tuple[str, str]]:
    """Validate an int-or-percent (maxSurge, maxUnavailable): a non-negative integer or a string such as "25%"."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return []
    if isinstance(value, str) and PERCENT.match(value):
        return []
    return [(field, f'Invalid value: "{value}": a valid percent string must be a numeric string followed by an '
                    "ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%'), or a non-negative "
                    "integer")]


def _rollout_causes(obj: dict) -> list[tuple[str, str]]:
    """Validate the rolling update parameters of a Deployment, DaemonSet or StatefulSet."""
    spec = obj.get("spec") or {}
    strategy = spec.get("strategy") if obj["kind"] == "Deployment" else spec.get("updateStrategy")
    field = "spec.strategy" if obj["kind"] == "Deployment" else "spec.updateStrategy"
    rolling = (strategy or {}).get("rollingUpdate") if isinstance(strategy, dict) else None
    if not isinstance(rolling, dict):
        return []
    return [cause for key in ("maxSurge", "maxUnavailable", "partition")
            for cause in _int_or_percent(f"{field}.rollingUpdate.{key}", rolling.get(key))]


def _schedule_causes(obj: dict) -> list[tuple[str, str]]:
    """Validate a CronJob's schedule (the controller could never run a malformed one)."""
    schedule = (obj.get("spec") or {}).get("schedule")
    if not isinstance(schedule, str) or not schedule.strip():
        return [("spec.schedule", "Required value")]
    try:
        parse_schedule(schedule)
    except ValueError as exc:
        return [("spec.schedule", f'Invalid value: "{schedule}": {exc}')]
    return []


def _immutable_causes(obj: dict, old: dict | None) -> list[tuple[str, str]]:
    """Reject changes to fields Kubernetes makes immutable."""
    if old is None:
        return []
    kind, spec, old_spec = obj["kind"], obj.get("spec") or {}, old.get("spec") or {}
    workload = kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
    if workload and spec.get("selector") != old_spec.get("selector"):
        return [("spec.selector", f"Invalid value: {spec.get('selector')}: field is immutable")]
    if kind == "Service" and old_spec.get("clusterIP") and spec.get("clusterIP") not in (None, old_spec["clusterIP"]):
        return [("spec.clusterIPs[0]", f'Invalid value: "{spec.get("clusterIP")}": may not change once set')]
    if kind == "Job" and spec.get("template") != old_spec.get("template"):
        return [("spec.template", "Invalid value: field is immutable")]
    return []


def admit(res: Resource, obj: dict, old: dict | None = None) -> dict:
    """Default and validate an object before it is stored; raise ApiError(422) when invalid."""
    if not isinstance(obj.get("metadata"), dict):
        raise ApiError(400, "BadRequest", f"{res.kind} has no metadata; add metadata.name")
    structure(res, obj)
    DEFAULTERS.get(res.kind, lambda o: None)(obj)
    name = obj["metadata"].get("name", "")
    causes = _name_causes(res, name)
    if res.kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"):
        causes += _workload_causes(obj) + (_rollout_causes(obj) if res.kind in ROLLED else [])
    elif res.kind == "Pod":
        causes += _containers_causes(obj.get("spec") or {}, "spec")
    elif res.kind == "Service":
        causes += _service_causes(obj)
    elif res.kind == "CronJob":
        causes += _schedule_causes(obj)
    causes += _immutable_causes(obj, old)
    if causes:
        raise invalid(res.kind, res.group, name, causes)
    return obj
