"""Resource verbs over HTTP: list, get, create, update, patch, delete, scale, and self-subject reviews."""

from __future__ import annotations

from dataclasses import dataclass

import orjson
import yaml

from aoi.twin.api import authz, bodies, credentials, models, paging, shapes
from aoi.twin.api.presentation import clock_shift, present, present_all, restamp_restart
from aoi.twin.api.protobuf import ProtobufError, decode_body
from aoi.twin.api.routes import Route
from aoi.twin.api.tables import render_table
from aoi.twin.core import errors, operations
from aoi.twin.core.errors import ApiError
from aoi.twin.core.resources import SUBRESOURCE_KINDS
from aoi.twin.core.selectors import SelectorError, parse_field_selector, parse_label_selector
from aoi.twin.core.structure import as_json

JSON = "application/json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PROTOBUF = "application/vnd.kubernetes.protobuf"
REVIEW_KINDS = ("SelfSubjectAccessReview", "SelfSubjectRulesReview", "SelfSubjectReview")


@dataclass
class Call:
    """One authenticated API request."""

    method: str
    route: Route
    user: authz.User
    headers: dict
    body: bytes

    @property
    def wants_table(self) -> bool:
        """Tell whether the client asked for server-side printing."""
        return "as=Table" in (self.headers.get("accept") or "")

    @property
    def dry_run(self) -> bool:
        return self.route.arg("dryRun") == "All"


@dataclass
class Reply:
    """A complete response."""

    code: int
    body: bytes
    content_type: str = JSON


def ok(obj, code: int = 200) -> Reply:
    """Return a JSON reply."""
    return Reply(code, orjson.dumps(obj))


def decode_raw(body: bytes, ctype: str):
    """Decode a body by its media type (JSON, YAML or Kubernetes protobuf), refusing deep nesting."""
    try:
        if ctype == PROTOBUF:
            data = decode_body(body)
        elif ctype in ("application/yaml", "application/apply-patch+yaml"):
            data = as_json(yaml.safe_load(body))
        else:
            data = orjson.loads(body or b"{}")
    except (ProtobufError, orjson.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError, ValueError) as exc:
        raise errors.bad_request(f"the request body could not be decoded as {ctype}: {exc}") from exc
    except RecursionError as exc:
        raise bodies.too_deep() from exc
    if bodies.depth(data) > bodies.MAX_DEPTH:
        raise bodies.too_deep()
    return data


def decode(call: Call) -> dict:
    """Decode a request body into an object of the route's kind (a top-level shape check included)."""
    ctype = (call.headers.get("content-type") or JSON).split(";")[0].strip()
    data = decode_raw(call.body, ctype)
    r = call.route
    data = {} if data is None else data
    if r.subresource:  # a Scale, Eviction, TokenRequest, or the parent's kind for /status
        return shapes.check_object(data, SUBRESOURCE_KINDS.get(r.subresource, ("", "", r.resource.kind))[2])
    return shapes.check_object(data, r.resource.kind, r.resource.key, r.resource.api_version)


def matcher(route: Route):
    """Compile the label and field selectors of a list or watch."""
    try:
        labels = parse_label_selector(route.arg("labelSelector"))
        fields = parse_field_selector(route.arg("fieldSelector"))
    except SelectorError as exc:
        raise errors.bad_request(str(exc)) from exc
    return lambda obj: labels(obj) and fields(obj)


def table_reply(twin, call: Call, objects: list[dict], meta: dict | None = None) -> Reply:
    """Render objects as a meta.k8s.io Table (`meta`: a list page's metadata, else the current version)."""
    try:
        table = render_table(call.route.resource.key, objects, twin.clock.now(),
                             include_object=call.route.arg("includeObject", "Metadata"))
    except ValueError as exc:
        raise errors.bad_request(str(exc)) from exc
    table["metadata"] = meta or {"resourceVersion": str(twin.store.rv)}
    return Reply(200, orjson.dumps(table), TABLE)


def list_objects(twin, call: Call) -> Reply:
    """Answer a list, as a Table or a <Kind>List, one page of it when the client sets `limit`."""
    r = call.route
    objects = twin.store.list(r.resource, r.namespace or None, matcher(r))
    chunk = paging.page(twin, r, objects, filtered=bool(r.arg("labelSelector") or r.arg("fieldSelector")))
    if call.wants_table:
        return table_reply(twin, call, chunk.objects, chunk.metadata)
    items = present_all(chunk.objects, r.resource.kind, clock_shift(twin, call.headers, r))
    return ok({"kind": f"{r.resource.kind}List", "apiVersion": r.resource.api_version,
               "metadata": chunk.metadata, "items": items})


def get_object(twin, call: Call) -> Reply:
    """Answer a get, as a one-row Table or the object."""
    r = call.route
    obj = operations.get(twin, r.resource, r.namespace, r.name)
    if r.subresource == "scale":
        return ok(operations.scale_of(r.resource, obj))
    if call.wants_table:
        return table_reply(twin, call, [obj])
    return ok(present(obj, r.resource.kind, clock_shift(twin, call.headers, call.route), listed=False))


def create_object(twin, call: Call) -> Reply:
    """Answer a POST."""
    r = call.route
    body = decode(call)
    if r.resource.kind in REVIEW_KINDS:  # never stored, so a dry run answers exactly the same
        return ok(self_review(twin, call.user, body), 201)
    if r.subresource == "token":
        return ok(token_request(twin, r, body, call.dry_run), 201)
    if r.subresource == "eviction":
        return ok(evict(twin, r, body, call.dry_run), 201)
    if r.name or r.subresource:
        raise errors.method_not_allowed(f"the server does not allow this method on {r.resource.key}/{r.subresource}")
    return ok(operations.create(twin, r.resource, r.namespace, body, call.dry_run, models.check), 201)


def update_object(twin, call: Call) -> Reply:
    """Answer a PUT (including /status and /scale)."""
    r = call.route
    body = decode(call)
    if r.subresource == "scale":
        current = operations.get(twin, r.resource, r.namespace, r.name)
        return ok(operations.set_replicas(twin, r.resource, current, (body.get("spec") or {}).get("replicas"),
                                          call.dry_run, models.check))
    return ok(operations.update(twin, r.resource, r.namespace, r.name, body, r.subresource or None, call.dry_run,
                                models.check))


def patch_object(twin, call: Call) -> Reply:
    """Answer a PATCH; an apply patch of a missing object creates it."""
    from aoi.twin.core.patch import PatchError

    r = call.route
    ctype = call.headers.get("content-type") or ""
    if "yaml" in ctype:  # the patch engine decodes YAML itself: bound its depth first
        decode_raw(call.body, ctype.split(";")[0].strip())
    current = twin.store.get(r.resource, r.namespace, r.name)
    body = restamp_restart(twin, call.headers, call.body)
    try:
        check_patched(r, current, body, ctype)
        obj = operations.patch(twin, r.resource, r.namespace, r.name, body, ctype, r.subresource or None,
                               call.dry_run, models.check)
    except PatchError as exc:
        raise ApiError(exc.code, {400: "BadRequest", 415: "UnsupportedMediaType"}.get(exc.code, "Invalid"),
                       str(exc)) from exc
    return ok(obj, 200 if current is not None else 201)


def check_patched(r: Route, current: dict | None, body: bytes, ctype: str) -> None:
    """Type-check the object a patch would make before anything is stored (the patch engine is pure)."""
    from aoi.twin.core.patch import apply_patch

    if r.subresource == "scale" or (current is None and not ctype.startswith("application/apply-patch")):
        return  # a Scale is checked when its replicas are set; a missing object is a 404 further on
    shapes.check_object(apply_patch(current or {}, body, ctype, r.resource.kind), r.resource.kind)


def delete_object(twin, call: Call) -> Reply:
    """Answer a DELETE of one object or a collection."""
    r = call.route
    options = shapes.delete_options(decode_raw(call.body, JSON) if call.body.strip() else {})
    dry_run = call.dry_run or "All" in (options.get("dryRun") or [])  # kubectl sends DeleteOptions.dryRun
    if not r.name:
        for obj in list(twin.store.list(r.resource, r.namespace or None, matcher(r))):
            operations.delete(twin, r.resource, obj["metadata"].get("namespace", ""), obj["metadata"]["name"],
                              options, dry_run)
        return ok({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
    obj = operations.delete(twin, r.resource, r.namespace, r.name, options, dry_run)
    return ok(obj)


def self_review(twin, user: authz.User, body: dict) -> dict:
    """Answer SelfSubjectAccessReview, SelfSubjectRulesReview and SelfSubjectReview (never stored)."""
    body = dict(body)
    spec = body.get("spec") or {}
    if body.get("kind") == "SelfSubjectReview":
        body["status"] = {"userInfo": {"username": user.name, "groups": list(user.groups)}}
    elif body.get("kind") == "SelfSubjectRulesReview":
        body["status"] = rules_review(twin, user, spec.get("namespace", ""))
    else:
        allowed = access_review(twin, user, spec)
        body["status"] = {"allowed": allowed}
        if not allowed and not user.is_admin:
            body["status"]["reason"] = ""
    body.setdefault("metadata", {})["creationTimestamp"] = None
    return body


def rules_review(twin, user: authz.User, namespace: str) -> dict:
    """Return the status of a SelfSubjectRulesReview: the user's resource and non-resource rules."""
    if user.is_admin:
        rules = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
        non_resource = [dict(r) for r in authz.DISCOVERY_RULES]
    else:
        rules = [{k: r.get(k, []) for k in ("verbs", "apiGroups", "resources", "resourceNames") if r.get(k)}
                 for r in authz.rules_for(twin, user, namespace) if r.get("resources")]
        non_resource = [{k: r[k] for k in ("verbs", "nonResourceURLs")} for r in authz.non_resource_rules(twin, user)]
    return {"resourceRules": rules, "nonResourceRules": non_resource, "incomplete": False}


def access_review(twin, user: authz.User, spec: dict) -> bool:
    """Decide a SelfSubjectAccessReview: resourceAttributes, or nonResourceAttributes (a path and a verb)."""
    attrs = spec.get("resourceAttributes")
    if isinstance(attrs, dict) and attrs:
        return authz.allowed(twin, user, str(attrs.get("verb", "")), str(attrs.get("group", "")),
                             str(attrs.get("resource", "")), str(attrs.get("subresource", "")),
                             str(attrs.get("namespace", "")), str(attrs.get("name", "")))
    path_attrs = spec.get("nonResourceAttributes")
    if isinstance(path_attrs, dict) and path_attrs.get("path"):
        return authz.non_resource_allowed(twin, user, str(path_attrs.get("verb", "")), str(path_attrs["path"]))
    return False


def evict(twin, route: Route, body: dict, dry_run: bool = False) -> dict:
    """Evict a pod (kubectl drain): delete it gracefully; no PodDisruptionBudget stands in the way here.

    A dry run (`dryRun=All`, or deleteOptions.dryRun as `kubectl drain --dry-run=server` sends) changes nothing.
    """
    options = shapes.delete_options(body.get("deleteOptions"))
    operations.delete(twin, route.resource, route.namespace, route.name, options,
                      dry_run or "All" in (options.get("dryRun") or []))
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def token_request(twin, route: Route, body: dict, dry_run: bool = False) -> dict:
    """Issue a bearer token for a service account (kubectl create token); a dry run issues none."""
    operations.get(twin, route.resource, route.namespace, route.name)
    token = "" if dry_run else credentials.new_token()  # from `secrets`: never follows from the seed
    if token:
        twin.tokens[token] = authz.service_account_user(route.namespace, route.name)
    expires = twin.clock.now() + int((body.get("spec") or {}).get("expirationSeconds") or 3600)
    from aoi.twin.core.clock import rfc3339

    body = dict(body)
    body["status"] = {"token": token, "expirationTimestamp": rfc3339(expires)}
    return body
