"""API semantics shared by the HTTP server and in-process callers: create, update, patch, delete, scale."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from aoi.twin.core import errors
from aoi.twin.core.admission import admit
from aoi.twin.core.clock import rfc3339
from aoi.twin.core.errors import ApiError
from aoi.twin.core.resources import Resource

if TYPE_CHECKING:
    from aoi.twin.core.interface import TwinView

Check = Callable[[Resource, dict], None]  # a last look at an object about to be stored (the API's type check)


def _check_namespace(twin: TwinView, res: Resource, namespace: str) -> None:
    """Refuse writes into a missing or terminating namespace."""
    if not res.namespaced:
        return
    ns = twin.get("namespaces", "", namespace)
    if ns is None:
        raise errors.not_found(twin.resource("namespaces"), namespace)
    if ns["metadata"].get("deletionTimestamp"):
        raise ApiError(403, "Forbidden", f'{res.key} "" is forbidden: unable to create new content in namespace '
                                         f"{namespace} because it is being terminated",
                       {"kind": res.plural,
                        "causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace"}]})


def _prepare_service(twin: TwinView, obj: dict, old: dict | None) -> None:
    """Allocate cluster IPs and node ports, default ports and types."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    old_spec = (old or {}).get("spec") or {}
    if spec["type"] != "ExternalName":
        ip = spec.get("clusterIP") or old_spec.get("clusterIP")
        if not ip:
            ip = twin.ids.cluster_ip()
        elif ip != "None":
            twin.ids.reserve_cluster_ip(ip)
        spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    old_ports = {p.get("port"): p for p in old_spec.get("ports") or []}
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))
        if spec["type"] in ("NodePort", "LoadBalancer") and not port.get("nodePort"):
            port["nodePort"] = old_ports.get(port.get("port"), {}).get("nodePort") or twin.ids.port()
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    obj.setdefault("status", {}).setdefault("loadBalancer", {})


def _prepare(twin: TwinView, res: Resource, obj: dict, old: dict | None, check: Check | None = None) -> None:
    """Run admission plus the allocations some kinds need, then `check` (API writes: the stored form's types)."""
    admit(res, obj, old)
    if res.kind == "Service":
        _prepare_service(twin, obj, old)
    if check is not None:
        check(res, obj)


def create(twin: TwinView, res: Resource, namespace: str, body: dict, dry_run: bool = False,
           check: Check | None = None) -> dict:
    """Create an object as POST does; return the stored object."""
    obj = copy.deepcopy(body)
    meta = obj.setdefault("metadata", {})
    if res.namespaced:
        if meta.get("namespace") and namespace and meta["namespace"] != namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                     "request")
        meta["namespace"] = namespace or meta.get("namespace") or "default"
        _check_namespace(twin, res, meta["namespace"])
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = meta["generateName"] + twin.ids.suffix()
    for key in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "generation"):
        meta.pop(key, None)
    _prepare(twin, res, obj, None, check)
    if twin.store.get(res, meta.get("namespace", ""), meta["name"]) is not None:
        raise errors.already_exists(res, meta["name"])
    if dry_run:
        return obj
    stored = twin.store.create(res, obj)
    twin.settle()
    return stored


def get(twin: TwinView, res: Resource, namespace: str, name: str) -> dict:
    """Return an object or raise NotFound."""
    obj = twin.store.get(res, namespace, name)
    if obj is None:
        raise errors.not_found(res, name)
    return obj


def _keep_server_fields(obj: dict, current: dict, res: Resource, subresource: str | None) -> None:
    """Carry over what clients cannot change: identity, and status (or spec) by subresource."""
    meta, cur = obj.setdefault("metadata", {}), current["metadata"]
    for key in ("uid", "creationTimestamp", "generation", "deletionTimestamp", "namespace", "name"):
        if key in cur:
            meta[key] = cur[key]
    if res.status and subresource != "status" and "status" in current:
        obj["status"] = copy.deepcopy(current["status"])
    if subresource == "status":
        for key, value in current.items():
            if key not in ("status", "metadata"):
                obj[key] = copy.deepcopy(value)


def update(twin: TwinView, res: Resource, namespace: str, name: str, body: dict, subresource: str | None = None,
           dry_run: bool = False, check: Check | None = None) -> dict:
    """Replace an object as PUT does, with optimistic concurrency on resourceVersion."""
    current = get(twin, res, namespace, name)
    obj = copy.deepcopy(body)
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    if rv and rv != current["metadata"].get("resourceVersion"):
        raise errors.conflict(res, name)
    obj["apiVersion"], obj["kind"] = res.api_version, res.kind
    _keep_server_fields(obj, current, res, subresource)
    return _save(twin, res, obj, current, dry_run, check)


def _save(twin: TwinView, res: Resource, obj: dict, current: dict, dry_run: bool, check: Check | None = None) -> dict:
    """Admit and store a changed object; finish a deletion whose finalizers are gone."""
    _prepare(twin, res, obj, current, check)
    if dry_run:
        return obj
    if obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers") and res.kind != "Namespace":
        twin.store.delete(res, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        twin.settle()
        return obj
    stored = twin.store.update(res, obj, old=current)
    twin.settle()
    return stored


def patch(twin: TwinView, res: Resource, namespace: str, name: str, body: bytes, content_type: str,
          subresource: str | None = None, dry_run: bool = False, check: Check | None = None) -> dict:
    """Apply a PATCH (strategic, merge, JSON or apply) and store the result."""
    from aoi.twin.core.patch import apply_patch  # the patch engine lives with the API layer

    current = twin.store.get(res, namespace, name)
    if current is None:
        if content_type.startswith("application/apply-patch"):
            return create(twin, res, namespace, apply_patch({}, body, content_type, res.kind), dry_run, check)
        raise errors.not_found(res, name)
    if subresource == "scale":
        return patch_scale(twin, res, current, body, content_type, dry_run, check)
    obj = apply_patch(current, body, content_type, res.kind)
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        raise errors.bad_request("the patch removed the object's metadata; patch fields inside it instead")
    obj["apiVersion"], obj["kind"] = res.api_version, res.kind
    _keep_server_fields(obj, current, res, subresource)
    return _save(twin, res, obj, current, dry_run, check)


def scale_of(res: Resource, obj: dict) -> dict:
    """Return the autoscaling/v1 Scale view of a workload."""
    from aoi.twin.core.selectors import selector_string

    meta = obj["metadata"]
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": meta["name"], "namespace": meta.get("namespace"), "uid": meta["uid"],
                         "resourceVersion": meta.get("resourceVersion"),
                         "creationTimestamp": meta.get("creationTimestamp")},
            "spec": {"replicas": obj["spec"].get("replicas", 1)},
            "status": {"replicas": (obj.get("status") or {}).get("replicas", 0),
                       "selector": selector_string(obj["spec"].get("selector"))}}


def patch_scale(twin: TwinView, res: Resource, current: dict, body: bytes, content_type: str, dry_run: bool,
                check: Check | None = None) -> dict:
    """Patch the scale subresource and return the new Scale."""
    from aoi.twin.core.patch import apply_patch

    scale = apply_patch(scale_of(res, current), body, content_type, "Scale")
    return set_replicas(twin, res, current, (scale.get("spec") or {}).get("replicas", 0), dry_run, check)


def set_replicas(twin: TwinView, res: Resource, current: dict, replicas, dry_run: bool = False,
                 check: Check | None = None) -> dict:
    """Set spec.replicas through the scale subresource and return the Scale."""
    if not isinstance(replicas, int) or isinstance(replicas, bool) or not 0 <= replicas < 2**31:
        bound = "less than or equal to 2147483647" if isinstance(replicas, int) and replicas > 0 else \
            "greater than or equal to 0"
        raise errors.invalid("Scale", "autoscaling", current["metadata"]["name"],
                             [("spec.replicas", f"Invalid value: {replicas}: must be {bound}")])
    obj = copy.deepcopy(current)
    obj["spec"]["replicas"] = replicas
    saved = _save(twin, res, obj, current, dry_run, check)
    return scale_of(res, saved)


def delete(twin: TwinView, res: Resource, namespace: str, name: str, options: dict | None = None,
           dry_run: bool = False) -> dict:
    """Delete as the API server does: graceful for running pods, finalizers honoured, dependents collected."""
    options = options or {}
    obj = get(twin, res, namespace, name)
    if dry_run:
        return obj
    if options.get("propagationPolicy") == "Orphan":
        _orphan_dependents(twin, obj)
    meta = obj["metadata"]
    graceful = _grace_seconds(res, obj, options)
    if meta.get("finalizers") or graceful or res.kind == "Namespace":
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = rfc3339(twin.clock.now() + (graceful or 0))
            meta["deletionGracePeriodSeconds"] = graceful or 0
            if res.kind == "Namespace":
                obj.setdefault("status", {})["phase"] = "Terminating"
            twin.store.update(res, obj)
        twin.settle()
        return obj
    twin.store.delete(res, namespace, name)
    twin.settle()
    return obj


def _grace_seconds(res: Resource, obj: dict, options: dict) -> int:
    """Return the termination grace period for a pod that is running on a node (0 otherwise)."""
    if res.kind != "Pod" or not obj["spec"].get("nodeName"):
        return 0
    if obj.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        return 0
    grace = options.get("gracePeriodSeconds")
    return int(obj["spec"].get("terminationGracePeriodSeconds", 30) if grace is None else grace)


def _orphan_dependents(twin: TwinView, owner: dict) -> None:
    """Drop owner references to owner before it goes, so its dependents survive."""
    uid = owner["metadata"]["uid"]
    namespace = owner["metadata"].get("namespace")
    for res in twin.store.resources():
        if not res.namespaced:
            continue
        for obj in twin.store.list(res, namespace):
            refs = obj["metadata"].get("ownerReferences") or []
            kept = [r for r in refs if r.get("uid") != uid]
            if len(kept) != len(refs):
                obj["metadata"]["ownerReferences"] = kept
                twin.store.update(res, obj)
