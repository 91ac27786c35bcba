"""Version, discovery (aggregated and legacy) and the minimal OpenAPI v3 documents kubectl needs."""

from __future__ import annotations

import hashlib

import orjson

from aoi.twin.api import routes
from aoi.twin.api.handlers import Reply, ok
from aoi.twin.core.resources import CATALOG, SUBRESOURCE_KINDS, SUBRESOURCE_VERBS, Resource

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0",
           "gitCommit": "70d3cc986aa8221cd1dfb1121852688902d3bf53", "gitTreeState": "clean",
           "buildDate": "2024-12-11T18:04:20Z", "goVersion": "go1.23.3", "compiler": "gc", "platform": "linux/amd64"}


def _sub_kind(res: Resource, sub: str) -> tuple[str, str, str]:
    """Return (group, version, kind) served by a subresource."""
    return SUBRESOURCE_KINDS.get(sub, (res.group, res.version, res.kind))


def _legacy_entry(res: Resource) -> dict:
    entry = {"name": res.plural, "singularName": res.singular, "namespaced": res.namespaced, "kind": res.kind,
             "verbs": list(res.verbs)}
    if res.short_names:
        entry["shortNames"] = list(res.short_names)
    if res.categories:
        entry["categories"] = list(res.categories)
    return entry


def _legacy_sub(res: Resource, sub: str) -> dict:
    group, version, kind = _sub_kind(res, sub)
    entry = {"name": f"{res.plural}/{sub}", "singularName": "", "namespaced": res.namespaced, "kind": kind,
             "verbs": list(SUBRESOURCE_VERBS.get(sub, ("get",)))}
    if (group, version) != (res.group, res.version):
        entry.update(group=group, version=version)
    return entry


def resource_list(group: str, version: str) -> dict | None:
    """Return the legacy APIResourceList of one group-version, or None if not served."""
    resources = CATALOG.in_version(group, version)
    if not resources:
        return None
    items = []
    for res in resources:
        items.append(_legacy_entry(res))
        items += [_legacy_sub(res, sub) for sub in res.subresources]
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version, "resources": items}


def _aggregated_resource(res: Resource) -> dict:
    entry = {"resource": res.plural, "responseKind": {"group": res.group, "version": res.version, "kind": res.kind},
             "scope": "Namespaced" if res.namespaced else "Cluster", "singularResource": res.singular,
             "verbs": sorted(res.verbs)}
    if res.short_names:
        entry["shortNames"] = list(res.short_names)
    if res.categories:
        entry["categories"] = list(res.categories)
    subs = []
    for sub in res.subresources:
        group, version, kind = _sub_kind(res, sub)
        subs.append({"subresource": sub, "responseKind": {"group": group, "version": version, "kind": kind},
                     "verbs": sorted(SUBRESOURCE_VERBS.get(sub, ("get",)))})
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated(core: bool) -> dict:
    """Return the aggregated discovery document for /api (core) or /apis."""
    items = []
    for group, versions in CATALOG.groups().items():
        if (group == "") != core:
            continue
        items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": [
            {"version": v, "freshness": "Current",
             "resources": [_aggregated_resource(r) for r in CATALOG.in_version(group, v)]} for v in versions]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


def legacy_root(core: bool) -> dict:
    """Return the legacy /api (APIVersions) or /apis (APIGroupList) document."""
    if core:
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "172.18.0.2:6443"}]}
    groups = []
    for group, versions in CATALOG.groups().items():
        if group:
            gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
            groups.append({"name": group, "versions": gvs, "preferredVersion": gvs[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def openapi_document(group: str, version: str) -> dict | None:
    """Return a minimal OpenAPI v3 document: one PATCH operation per kind, enough for kubectl validation."""
    resources = CATALOG.in_version(group, version)
    if not resources:
        return None
    paths = {}
    for res in resources:
        scope = "/namespaces/{namespace}" if res.namespaced else ""
        paths[f"/{_gv_path(group, version)}{scope}/{res.plural}/{{name}}"] = {"patch": {
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": res.kind},
            "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}]}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": VERSION["gitVersion"]},
            "paths": paths, "components": {"schemas": {}}}


def openapi_root() -> dict:
    """Return the /openapi/v3 index with one hashed URL per group-version."""
    paths = {}
    for group, versions in CATALOG.groups().items():
        for version in versions:
            path = _gv_path(group, version)
            digest = hashlib.sha256(orjson.dumps(openapi_document(group, version))).hexdigest().upper()[:64]
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


def non_resource(path: str, accept: str) -> Reply | None:
    """Answer version, discovery and OpenAPI paths; None when the path is not one of them."""
    segments, _ = routes.split(path)
    joined = "/".join(segments)
    wants_aggregated = "as=APIGroupDiscoveryList" in accept
    if joined == "version":
        return ok(VERSION)
    if joined in ("api", "apis"):
        core = joined == "api"
        if wants_aggregated:
            return Reply(200, orjson.dumps(aggregated(core)), AGGREGATED)
        return ok(legacy_root(core))
    if len(segments) in (2, 3) and segments[0] in ("api", "apis"):
        if segments[0] == "api":
            group, version = "", segments[1]
        else:
            group, version = segments[1], segments[2] if len(segments) > 2 else ""
        doc = resource_list(group, version)
        return ok(doc) if doc else None
    if joined == "openapi/v3":
        return ok(openapi_root())
    if segments[:2] == ["openapi", "v3"] and len(segments) > 2:
        rest = segments[2:]
        group, version = ("", rest[1]) if rest[0] == "api" and len(rest) == 2 else (
            (rest[1], rest[2]) if rest[0] == "apis" and len(rest) == 3 else (None, None))
        doc = openapi_document(group, version) if group is not None else None
        return ok(doc) if doc else None
    return None
