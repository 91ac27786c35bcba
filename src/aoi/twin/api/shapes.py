"""The shape of decoded request objects: the JSON types Kubernetes' typed decoder would insist on, for the fields
the twin's admission and controllers read (metadata, pod specs, workload and service specs, DeleteOptions)."""

from __future__ import annotations

from aoi.twin.api.bodies import unsupported_dry_run
from aoi.twin.core import errors
from aoi.twin.core.errors import ApiError

STR, INT, BOOL, OBJ, STRINGS, INT_OR_STR = "a string", "a 32-bit integer", "a boolean", "an object", \
    "a map of strings", "an integer or a string"
INT64, STRING_LISTS = "a 64-bit integer", "a map of string lists"
BOUNDS = {INT: 2**31, INT64: 2**63}  # Go's int32 and int64: a larger number does not decode
METADATA = {"name": STR, "namespace": STR, "generateName": STR, "resourceVersion": STR, "uid": STR,
            "labels": STRINGS, "annotations": STRINGS, "finalizers": [STR], "ownerReferences": [OBJ]}
CONTAINER = {"name": STR, "image": STR, "command": [STR], "args": [STR], "workingDir": STR, "imagePullPolicy": STR,
             "ports": [{"name": STR, "containerPort": INT, "protocol": STR}],
             "env": [{"name": STR, "value": STR, "valueFrom": OBJ}], "envFrom": [OBJ],
             "resources": {"limits": OBJ, "requests": OBJ},
             "volumeMounts": [{"name": STR, "mountPath": STR, "subPath": STR, "readOnly": BOOL}],
             "livenessProbe": OBJ, "readinessProbe": OBJ, "startupProbe": OBJ, "securityContext": OBJ}
VOLUME = {"name": STR, "configMap": OBJ, "secret": OBJ, "persistentVolumeClaim": OBJ, "emptyDir": OBJ,
          "hostPath": OBJ, "projected": OBJ}
POD_SPEC = {"containers": [CONTAINER], "initContainers": [CONTAINER], "volumes": [VOLUME], "nodeSelector": STRINGS,
            "nodeName": STR, "tolerations": [OBJ], "affinity": OBJ, "serviceAccountName": STR, "restartPolicy": STR,
            "terminationGracePeriodSeconds": INT64, "priority": INT, "schedulerName": STR, "hostNetwork": BOOL}
TEMPLATE = {"metadata": {"labels": STRINGS, "annotations": STRINGS}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": STRINGS, "matchExpressions": [{"key": STR, "operator": STR, "values": [STR]}]}
WORKLOAD = {"replicas": INT, "selector": SELECTOR, "template": TEMPLATE, "minReadySeconds": INT, "paused": BOOL,
            "revisionHistoryLimit": INT, "progressDeadlineSeconds": INT, "strategy": OBJ, "updateStrategy": OBJ,
            "serviceName": STR, "volumeClaimTemplates": [OBJ]}
JOB = {"parallelism": INT, "completions": INT, "backoffLimit": INT, "activeDeadlineSeconds": INT64, "suspend": BOOL,
       "selector": SELECTOR, "template": TEMPLATE}
SERVICE = {"type": STR, "selector": STRINGS, "clusterIP": STR, "externalName": STR,
           "ports": [{"name": STR, "port": INT, "targetPort": INT_OR_STR, "nodePort": INT, "protocol": STR}]}
DATA = {"data": STRINGS, "binaryData": STRINGS, "stringData": STRINGS}
CHAOS_SELECTOR = {"namespaces": [STR], "labelSelectors": STRINGS, "annotationSelectors": STRINGS, "nodes": [STR],
                  "nodeSelectors": STRINGS, "podPhaseSelectors": [STR], "pods": STRING_LISTS}
CHAOS = {"spec": {"action": STR, "mode": STR, "value": STR, "duration": STR, "gracePeriod": INT64,
                  "containerNames": [STR], "direction": STR, "selector": CHAOS_SELECTOR,
                  "delay": {"latency": STR, "jitter": STR, "correlation": STR},
                  "loss": {"loss": STR, "correlation": STR}},
         "status": {"conditions": [OBJ], "experiment": {"desiredPhase": STR, "containerRecords": [OBJ]}}}
# The typed top-level fields of each kind (metadata for all); kinds not listed get the metadata check only.
KINDS = {"Pod": {"spec": POD_SPEC}, "Deployment": {"spec": WORKLOAD}, "ReplicaSet": {"spec": WORKLOAD},
         "StatefulSet": {"spec": WORKLOAD}, "DaemonSet": {"spec": WORKLOAD}, "Job": {"spec": JOB},
         "CronJob": {"spec": {"schedule": STR, "suspend": BOOL, "jobTemplate": {"spec": JOB}}},
         "ReplicationController": {"spec": {"replicas": INT, "selector": STRINGS, "template": TEMPLATE}},
         "Service": {"spec": SERVICE}, "ConfigMap": DATA, "Secret": DATA, "Scale": {"spec": {"replicas": INT}},
         "PodChaos": CHAOS, "NetworkChaos": CHAOS}


def _wrong(kind: str, field: str, expected: str, value) -> ApiError:
    """Return the 400 for a field of the wrong JSON type (the decoder's error on a real server)."""
    return errors.bad_request(f"{kind}: {field} must be {expected}, got {type(value).__name__} "
                              f"{str(value)[:40]!r}; fix the field's type")


def check_object(body, kind: str, plural: str = "", api_version: str = "") -> dict:
    """Return a decoded object of `kind` once its shape is right; null spec, status or metadata count as absent, and
    a missing apiVersion/kind is the path's (as the API server's decoder defaults them). `plural` set: the body's
    kind must be the path's.

    Example:
        >>> check_object({"metadata": {"name": "a"}, "spec": None}, "ConfigMap")
        {'metadata': {'name': 'a'}}
    """
    if not isinstance(body, dict):
        raise _wrong(kind, "the body", "a JSON object", body)
    body = {k: v for k, v in body.items() if not (k in ("metadata", "spec", "status") and v is None)}
    for key in ("apiVersion", "kind"):
        if not isinstance(body.get(key, ""), str):
            raise _wrong(kind, key, "a string", body[key])
    if plural and body.get("kind", kind) != kind:
        raise errors.bad_request(f'the body is a {body["kind"]} but {plural} holds {kind} objects; '
                                 f"send it to the {body['kind']} resource's path")
    if plural:
        body = {"apiVersion": api_version, "kind": kind, **body}
    for key in ("metadata", "spec", "status"):
        if not isinstance(body.get(key, {}), dict):
            raise _wrong(kind, key, "an object", body[key])
    check(body, {"metadata": METADATA, **KINDS.get(kind, {})}, "", kind)
    return body


def check(value, schema, path: str, kind: str) -> None:
    """Check a value against a schema: a dict of field schemas, [item schema], or one of the type names."""
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise _wrong(kind, path, OBJ, value)
        for key, sub in schema.items():
            if value.get(key) is not None:
                check(value[key], sub, f"{path}.{key}" if path else key, kind)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise _wrong(kind, path, "a list", value)
        for i, item in enumerate(value):
            check(item, schema[0], f"{path}[{i}]", kind)
    elif not _is(value, schema):
        raise _wrong(kind, path, schema, value)


def _is(value, type_name: str) -> bool:
    """Tell whether a value has one of the leaf types."""
    if type_name == STRINGS:
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if type_name == STRING_LISTS:
        return isinstance(value, dict) and all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                               for v in value.values())
    if type_name == INT_OR_STR:
        return isinstance(value, str) or _is(value, INT)
    if type_name in BOUNDS:
        return isinstance(value, int) and not isinstance(value, bool) and -BOUNDS[type_name] <= value < \
            BOUNDS[type_name]
    return isinstance(value, {STR: str, BOOL: bool, OBJ: dict}[type_name])


def delete_options(options) -> dict:
    """Return DeleteOptions once their shape is right (dryRun a list, gracePeriodSeconds an integer).

    Example:
        >>> delete_options({"dryRun": ["All"]})
        {'dryRun': ['All']}
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise _wrong("DeleteOptions", "the body", "a JSON object", options)
    dry = options.get("dryRun") or []
    if not isinstance(dry, list) or not all(isinstance(v, str) for v in dry):
        raise _wrong("DeleteOptions", "dryRun", "a list of strings", dry)
    if any(v != "All" for v in dry):
        raise unsupported_dry_run("DeleteOptions", dry)
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
        raise _wrong("DeleteOptions", "gracePeriodSeconds", "an integer", grace)
    if not isinstance(options.get("propagationPolicy") or "", str):
        raise _wrong("DeleteOptions", "propagationPolicy", "a string", options["propagationPolicy"])
    return options
