"""Defaulting and validation on every write, as the API server's registry strategies do (the checks themselves:
validation.py)."""

from __future__ import annotations

import base64

from aoi.twin.core.errors import ApiError, invalid
from aoi.twin.core.quantity import canonical_map
from aoi.twin.core.resources import Resource
from aoi.twin.core.structure import structure
from aoi.twin.core.validation import causes


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


def admit(res: Resource, obj: dict, old: dict | None = None) -> dict:
    """Default and validate an object before it is stored; raise ApiError(422) when invalid."""
    if not isinstance(obj.get("metadata"), dict):
        raise ApiError(400, "BadRequest", f"{res.kind} has no metadata; add metadata.name")
    structure(res, obj)
    DEFAULTERS.get(res.kind, lambda o: None)(obj)
    found = causes(res, obj, old)
    if found:
        raise invalid(res.kind, res.group, obj["metadata"].get("name", ""), found)
    return obj
