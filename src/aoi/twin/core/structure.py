"""The structure a real API server gives every built-in object it stores, whatever the body held.

Its decoder reads a body into Go structs: a null field becomes absent (nil pointers, slices and maps are omitted),
except the non-pointer timestamps, which stay null; `spec` and `status` are structs, so they are always there, `{}`
at least. Controllers can then rely on both. The Chaos Mesh kinds get the same: their CRDs' structural schemas prune
nulls too, and the chaos controller reads their spec.
"""

from __future__ import annotations

import orjson

from aoi.twin.core.resources import Resource

# Non-pointer metav1.Time fields: a null decodes to the zero time, which encodes as null again.
NULL_KEPT = frozenset({"creationTimestamp", "lastProbeTime", "lastTransitionTime", "lastUpdateTime",
                       "lastHeartbeatTime", "startedAt", "finishedAt", "eventTime"})
WITH_SPEC = frozenset({"Pod", "Node", "Namespace", "Service", "PersistentVolume", "PersistentVolumeClaim",
                       "ReplicationController", "ResourceQuota", "LimitRange", "Deployment", "ReplicaSet",
                       "StatefulSet", "DaemonSet", "Job", "CronJob", "HorizontalPodAutoscaler", "NetworkPolicy",
                       "Ingress", "IngressClass", "PodDisruptionBudget", "CustomResourceDefinition", "Lease",
                       "PodChaos", "NetworkChaos"})
WITH_STATUS = WITH_SPEC - {"LimitRange", "NetworkPolicy", "IngressClass", "Lease"}


def drop_nulls(value) -> None:
    """Remove null fields from dicts in place, recursively (null items of lists stay: the shape check refuses them).

    Example:
        >>> obj = {"a": None, "b": {"c": None, "creationTimestamp": None}, "d": [{"e": None}]}
        >>> drop_nulls(obj); obj
        {'b': {'creationTimestamp': None}, 'd': [{}]}
    """
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None and k not in NULL_KEPT]:
            del value[key]
        for item in value.values():
            if isinstance(item, (dict, list)):
                drop_nulls(item)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                drop_nulls(item)


def structure(res: Resource, obj: dict) -> None:
    """Give a built-in object the decoder's structure in place: nulls dropped, spec and status objects present.

    Example:
        >>> from aoi.twin.core.resources import CATALOG
        >>> node = {"kind": "Node", "metadata": {"name": "n", "labels": None}, "spec": None}
        >>> structure(CATALOG.find("", "v1", "nodes"), node); node
        {'kind': 'Node', 'metadata': {'name': 'n'}, 'spec': {}, 'status': {}}
    """
    drop_nulls(obj)
    if res.kind in WITH_SPEC:
        obj.setdefault("spec", {})
    if res.kind in WITH_STATUS:
        obj.setdefault("status", {})


def as_json(data):
    """Return YAML-decoded data as JSON carries it, as the API server turns YAML into JSON before decoding: keys
    become strings; raise ValueError for what JSON cannot hold (a lone surrogate escape, binary values, sets).

    Example:
        >>> as_json({1: ["a"]})
        {'1': ['a']}
        >>> as_json({"name": chr(0xD800)})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: the body holds text JSON cannot carry (str is not valid UTF-8: ...); send UTF-8 text
    """
    try:
        return orjson.loads(orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS))
    except (TypeError, orjson.JSONDecodeError) as exc:
        raise ValueError(f"the body holds text JSON cannot carry ({exc}); send UTF-8 text") from None
