"""Resource verbs over HTTP: list, get, create, update, patch, delete, scale, and self-subject reviews."""

from __future__ import annotations

from dataclasses import dataclass

import orjson
import yaml

from aoi.twin import credentials, errors, operations
from aoi.twin.api import authz
from aoi.twin.api.presentation import clock_shift, present, present_all, restamp_restart
from aoi.twin.api.protobuf import ProtobufError, decode_body
from aoi.twin.api.routes import Route
from aoi.twin.api.tables import render_table
from aoi.twin.errors import ApiError
from aoi.twin.selectors import SelectorError, parse_field_selector, parse_label_selector

JSON = "application/json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PROTOBUF = "application/vnd.kubernetes.protobuf"


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


def decode(call: Call) -> dict:
    """Decode a request body: JSON, YAML or Kubernetes protobuf."""
    ctype = (call.headers.get("content-type") or JSON).split(";")[0].strip()
    try:
        if ctype == PROTOBUF:
            return decode_body(call.body)
        if ctype in ("application/yaml", "application/apply-patch+yaml"):
            return yaml.safe_load(call.body) or {}
        return orjson.loads(call.body or b"{}")
    except (ProtobufError, orjson.JSONDecodeError, yaml.YAMLError) as exc:
        raise errors.bad_request(f"the request body could not be decoded as {ctype}: {exc}") from exc


def matcher(route: Route):
    """Compile the label and field selectors of a list or watch."""
    try:
        labels = parse_label_selector(route.arg("labelSelector"))
        fields = parse_field_selector(route.arg("fieldSelector"))
    except SelectorError as exc:
        raise errors.bad_request(str(exc)) from exc
    return lambda obj: labels(obj) and fields(obj)


def table_reply(twin, call: Call, objects: list[dict]) -> Reply:
    """Render objects as a meta.k8s.io Table."""
    try:
        table = render_table(call.route.resource.key, objects, twin.clock.now(),
                             include_object=call.route.arg("includeObject", "Metadata"))
    except ValueError as exc:
        raise errors.bad_request(str(exc)) from exc
    table["metadata"]["resourceVersion"] = str(twin.store.rv)
    return Reply(200, orjson.dumps(table), TABLE)


def list_objects(twin, call: Call) -> Reply:
    """Answer a list, as a Table or a <Kind>List."""
    res = call.route.resource
    objects = twin.store.list(res, call.route.namespace or None, matcher(call.route))
    if call.wants_table:
        return table_reply(twin, call, objects)
    items = present_all(objects, res.kind, clock_shift(twin, call.headers, call.route))
    return ok({"kind": f"{res.kind}List", "apiVersion": res.api_version,
               "metadata": {"resourceVersion": str(twin.store.rv)}, "items": items})


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
    if r.resource.kind in ("SelfSubjectAccessReview", "SelfSubjectRulesReview", "SelfSubjectReview"):
        return ok(self_review(twin, call.user, body), 201)
    if r.subresource == "token":
        return ok(token_request(twin, r, body), 201)
    if r.subresource == "eviction":
        return ok(evict(twin, r, body), 201)
    if r.name or r.subresource:
        raise errors.method_not_allowed(f"the server does not allow this method on {r.resource.key}/{r.subresource}")
    return ok(operations.create(twin, r.resource, r.namespace, body, call.dry_run), 201)


def update_object(twin, call: Call) -> Reply:
    """Answer a PUT (including /status and /scale)."""
    r = call.route
    body = decode(call)
    if r.subresource == "scale":
        current = operations.get(twin, r.resource, r.namespace, r.name)
        return ok(operations.set_replicas(twin, r.resource, current, (body.get("spec") or {}).get("replicas"),
                                          call.dry_run))
    return ok(operations.update(twin, r.resource, r.namespace, r.name, body, r.subresource or None, call.dry_run))


def patch_object(twin, call: Call) -> Reply:
    """Answer a PATCH; an apply patch of a missing object creates it."""
    from aoi.twin.api.patch import PatchError

    r = call.route
    ctype = call.headers.get("content-type") or ""
    existed = twin.store.get(r.resource, r.namespace, r.name) is not None
    body = restamp_restart(twin, call.headers, call.body)
    try:
        obj = operations.patch(twin, r.resource, r.namespace, r.name, body, ctype, r.subresource or None,
                               call.dry_run)
    except PatchError as exc:
        raise ApiError(exc.code, {400: "BadRequest", 415: "UnsupportedMediaType"}.get(exc.code, "Invalid"),
                       str(exc)) from exc
    return ok(obj, 200 if existed else 201)


def delete_object(twin, call: Call) -> Reply:
    """Answer a DELETE of one object or a collection."""
    r = call.route
    options = orjson.loads(call.body) if call.body.strip() else {}
    dry_run = call.dry_run or "All" in (options.get("dryRun") or [])  # kubectl sends DeleteOptions.dryRun
    if not r.name:
        for obj in list(twin.store.list(r.resource, r.namespace or None, matcher(r))):
            operations.delete(twin, r.resource, obj["metadata"].get("namespace", ""), obj["metadata"]["name"],
                              options, dry_run)
        return ok({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
    obj = operations.delete(twin, r.resource, r.namespace, r.name, options, dry_run)
    return ok(obj)


def self_review(twin, user: authz.User, body: dict) -> dict:
    """Answer SelfSubjectAccessReview, SelfSubjectRulesReview and SelfSubjectReview."""
    body = dict(body)
    spec = body.get("spec") or {}
    if body.get("kind") == "SelfSubjectReview":
        body["status"] = {"userInfo": {"username": user.name, "groups": list(user.groups)}}
    elif body.get("kind") == "SelfSubjectRulesReview":
        rules = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}] if user.is_admin else [
            {k: r.get(k, []) for k in ("verbs", "apiGroups", "resources", "resourceNames") if r.get(k)}
            for r in authz.rules_for(twin, user, spec.get("namespace", ""))]
        non_resource = [{"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz",
                                                               "/livez", "/openapi", "/openapi/*", "/readyz",
                                                               "/version", "/version/"]}]
        body["status"] = {"resourceRules": rules, "nonResourceRules": non_resource, "incomplete": False}
    else:
        attrs = spec.get("resourceAttributes") or {}
        allowed = bool(attrs) and authz.allowed(twin, user, attrs.get("verb", ""), attrs.get("group", ""),
                                                attrs.get("resource", ""), attrs.get("subresource", ""),
                                                attrs.get("namespace", ""), attrs.get("name", ""))
        if spec.get("nonResourceAttributes"):
            allowed = True
        body["status"] = {"allowed": allowed}
        if not allowed and not user.is_admin:
            body["status"]["reason"] = ""
    body.setdefault("metadata", {})["creationTimestamp"] = None
    return body


def evict(twin, route: Route, body: dict) -> dict:
    """Evict a pod (kubectl drain): delete it gracefully; no PodDisruptionBudget stands in the way here."""
    operations.delete(twin, route.resource, route.namespace, route.name, body.get("deleteOptions") or {})
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def token_request(twin, route: Route, body: dict) -> dict:
    """Issue a bearer token for a service account (kubectl create token)."""
    operations.get(twin, route.resource, route.namespace, route.name)
    token = credentials.new_token()  # from `secrets`: a credential never follows from the seed
    twin.tokens[token] = authz.service_account_user(route.namespace, route.name)
    expires = twin.clock.now() + int((body.get("spec") or {}).get("expirationSeconds") or 3600)
    from aoi.twin.clock import rfc3339

    body = dict(body)
    body["status"] = {"token": token, "expirationTimestamp": rfc3339(expires)}
    return body
