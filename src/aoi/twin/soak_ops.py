"""The requests of the twin's soak (aoi.twin.soak): API operations of every identity across the built-in kinds, with
nulls and wrong types at random places of real objects.

Every choice goes through a `Draw`, so random.Random (benchmarks/twin_soak.py) and Hypothesis (the soak test) share
one vocabulary, and Hypothesis can shrink a failing sequence. The state read to choose targets is the twin's own.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote

from aoi.twin.core.resources import CATALOG, Resource
from aoi.twin.soak_bodies import minimal

ROLES = ("admin",) * 6 + ("executor",) * 3 + ("probe",)
SKIPPED_GROUPS = ("metrics.k8s.io", "authorization.k8s.io", "authentication.k8s.io")
KINDS = tuple(r for r in CATALOG.resources if "create" in r.verbs and r.group not in SKIPPED_GROUPS
              and r.kind != "SelfSubjectReview")
VALUES = (None, None, None, {}, [], "", "x", 0, -1, 1, 3, 2**31, 1.5, True, {"a": None}, [None], ["x"], [{}],
          "\x01\u2028", "10Gi", "nope:latest", "a" * 300, {"$patch": "delete"})
NEW_NAMES = ("soak-a", "soak-b", "soak-c", "soak-d", "soak-e", "soak-f", "soak-g", "Bad_Name", "a" * 300, "x\x01", "")
PODS = CATALOG.find("", "v1", "pods")
DELETE_OPTIONS = (b"", b'{"gracePeriodSeconds":0}', b'{"propagationPolicy":"Orphan"}',
                  b'{"propagationPolicy":"Foreground"}', b'{"dryRun":["All"]}', b'{"gracePeriodSeconds":-1}')
MERGE, STRATEGIC, JSON_PATCH, APPLY = ("application/merge-patch+json", "application/strategic-merge-patch+json",
                                       "application/json-patch+json", "application/apply-patch+yaml")


class Draw(Protocol):
    """Where the soak's choices come from."""

    def choice(self, options: Sequence):
        """Return one of options."""

    def integer(self, low: int, high: int) -> int:
        """Return an integer from low to high inclusive."""


class RandomDraw:
    """Choices from a seeded random.Random.

    Example:
        >>> RandomDraw(random.Random(1)).integer(0, 9)
        2
    """

    def __init__(self, rng: random.Random):
        self.rng = rng

    def choice(self, options: Sequence):
        return options[self.rng.randrange(len(options))]

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)


@dataclass
class Request:
    """One API request of the soak."""

    role: str
    method: str
    path: str
    body: bytes = b""
    ctype: str = "application/json"
    accept: str = "application/json"

    def label(self) -> str:
        """Return the request in one line for reports."""
        return f"{self.role} {self.method} {self.path} {self.ctype} {self.body[:160]!r}"


def request(draw: Draw, twin) -> Request:
    """Draw one request against the twin's current objects."""
    verb = draw.choice(VERBS)
    res = PODS if verb is evict else draw.choice(KINDS)
    if (verb is scale and "scale" not in res.subresources) or (verb is status and not res.status):
        verb = patch
    with twin.lock:
        objects = twin.store.list(res)
        current = copy.deepcopy(objects[draw.integer(0, len(objects) - 1)]) if objects and draw.integer(0, 4) else None
        namespaces = [n["metadata"]["name"] for n in twin.list("namespaces")] + ["missing"]
    return (verb if objects else create)(draw, res, current, namespaces, draw.choice(ROLES))


def path(res: Resource, namespace: str, name: str = "", sub: str = "") -> str:
    """Return the API path of a collection, object or subresource."""
    base = f"/apis/{res.group}/{res.version}" if res.group else f"/api/{res.version}"
    scope = f"{base}/namespaces/{namespace}/{res.plural}" if res.namespaced else f"{base}/{res.plural}"
    return "/".join(part for part in (scope, quote(name, safe=""), sub) if part)


def _where(current: dict | None, draw: Draw, namespaces: list[str]) -> tuple[str, str]:
    """Return the (namespace, name) of the target: the drawn object's, else a drawn one."""
    if current is not None:
        return current["metadata"].get("namespace", ""), current["metadata"]["name"]
    return draw.choice(namespaces), draw.choice(NEW_NAMES)


def _mutated(draw: Draw, obj: dict, root: str = "") -> tuple[list, object, dict]:
    """Return (path, value, copy of obj with value set at path): a walk down existing keys, then a drawn value."""
    out = copy.deepcopy(obj)
    parts: list = [root] if root else []
    node = out.get(root) if root else out
    while isinstance(node, (dict, list)) and node and draw.integer(0, 2):
        key = draw.choice(sorted(node)) if isinstance(node, dict) else draw.integer(0, len(node) - 1)
        parts.append(key)
        node = node[key]
    value = draw.choice(VALUES) if draw.integer(0, 1) else variant(draw, node)
    if not parts:
        parts = [draw.choice(("spec", "status", "metadata", "data"))]
    holder = out
    for part in parts[:-1]:
        holder = holder[part]
    if isinstance(holder, dict) or (isinstance(holder, list) and parts[-1] < len(holder)):
        holder[parts[-1]] = copy.deepcopy(value)
    return parts, value, out


def variant(draw: Draw, old):
    """Return a value of old's own type, changed: the odd states the API accepts (empty lists, other strings).

    Example:
        >>> variant(RandomDraw(random.Random(0)), [1, 2])
        [2, 1]
    """
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return draw.choice((0, 1, -1, old + 1))
    if isinstance(old, str):
        return draw.choice(("", old + "x", old.upper(), "nope", "10.0.0.1", "Always", "RollingUpdate"))
    if isinstance(old, list):
        return draw.choice(([], old[:1], old + old[:1], old[::-1]))
    if isinstance(old, dict):
        return draw.choice(({}, dict(list(old.items())[1:]), {**old, "soak": "x"}))
    return draw.choice(VALUES)


def _merge_doc(parts: list, mutated: dict) -> dict:
    """Return a merge patch that makes the change at parts: nested maps down to it, a changed list sent whole.

    Example:
        >>> _merge_doc(["spec", "ports", 0], {"spec": {"ports": [None], "type": "x"}})
        {'spec': {'ports': [None]}}
    """
    doc: dict = {}
    cur, src = doc, mutated
    for i, part in enumerate(parts):
        value = src.get(part) if isinstance(src, dict) else None
        if i == len(parts) - 1 or not isinstance(value, dict) or not isinstance(parts[i + 1], str):
            cur[part] = copy.deepcopy(value)
            return doc
        cur[part] = {}
        cur, src = cur[part], value
    return doc


def _pointer(parts: list) -> str:
    """Return a JSON pointer for a path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _encode(body) -> bytes:
    """Encode a body as JSON (strings that JSON cannot carry become escapes)."""
    return json.dumps(body).encode()


def create(draw, res, current, namespaces, role) -> Request:
    """POST a copy of an object (or the kind's minimal body) under a new name, sometimes mutated."""
    namespace = draw.choice(namespaces)
    body = copy.deepcopy(current) if current is not None else minimal(res.kind, namespace)
    body["metadata"] = {"name": draw.choice(NEW_NAMES), "labels": (body.get("metadata") or {}).get("labels") or {}}
    if draw.integer(0, 2) == 0:
        body = _mutated(draw, body)[2]
    return Request(role, "POST", path(res, namespace), _encode(body))


def replace(draw, res, current, namespaces, role) -> Request:
    """PUT a mutated object, its resourceVersion kept, dropped or stale."""
    namespace, name = _where(current, draw, namespaces)
    body = _mutated(draw, current or minimal(res.kind, namespace))[2]
    meta = body.setdefault("metadata", {}) if isinstance(body.get("metadata"), dict) else {}
    meta["resourceVersion"] = draw.choice((meta.get("resourceVersion"), None, "1"))
    return Request(role, "PUT", path(res, namespace, name), _encode(body))


def patch(draw, res, current, namespaces, role) -> Request:
    """PATCH a change at a random place: merge, strategic or JSON patch, nulls included."""
    namespace, name = _where(current, draw, namespaces)
    parts, value, mutated = _mutated(draw, current or minimal(res.kind, namespace))
    ctype = draw.choice((MERGE, STRATEGIC, JSON_PATCH, APPLY))
    if ctype == JSON_PATCH:
        op = draw.choice(("replace", "add", "remove", "test"))
        body = [{"op": op, "path": _pointer(parts), **({} if op == "remove" else {"value": value})}]
    elif ctype == APPLY:  # the whole object, as `kubectl apply --server-side` sends it
        return Request(role, "PATCH", path(res, namespace, name) + "?fieldManager=soak&force=true",
                       _encode(mutated), ctype)
    else:
        body = _merge_doc(parts, mutated)
    return Request(role, "PATCH", path(res, namespace, name), _encode(body), ctype)


def status(draw, res, current, namespaces, role) -> Request:
    """Change the status subresource (a merge patch or a PUT of the object)."""
    namespace, name = _where(current, draw, namespaces)
    parts, _, mutated = _mutated(draw, current or minimal(res.kind, namespace), root="status")
    if draw.integer(0, 1):
        return Request(role, "PATCH", path(res, namespace, name, "status"), _encode(_merge_doc(parts, mutated)), MERGE)
    return Request(role, "PUT", path(res, namespace, name, "status"), _encode(mutated))


def delete(draw, res, current, namespaces, role) -> Request:
    """DELETE an object (or, rarely, a labelled collection) with drawn options."""
    namespace, name = _where(current, draw, namespaces)
    target = path(res, namespace, name) if draw.integer(0, 9) else path(res, namespace) + "?labelSelector=soak%3Dx"
    return Request(role, "DELETE", target, draw.choice(DELETE_OPTIONS))


def scale(draw, res, current, namespaces, role) -> Request:
    """Set replicas through the scale subresource (valid, negative, too large or not a number)."""
    namespace, name = _where(current, draw, namespaces)
    replicas = draw.choice((0, 1, 2, 3, -1, "2", None, 2**31))
    if draw.integer(0, 1):
        return Request(role, "PATCH", path(res, namespace, name, "scale"), _encode({"spec": {"replicas": replicas}}),
                       MERGE)
    body = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas}}
    return Request(role, "PUT", path(res, namespace, name, "scale"), _encode(body))


def evict(draw, res, current, namespaces, role) -> Request:
    """Evict a pod (policy/v1 Eviction), sometimes with odd delete options."""
    namespace, name = _where(current, draw, namespaces)
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace},
            "deleteOptions": draw.choice((None, {}, {"gracePeriodSeconds": 0}, {"dryRun": ["All"]}, "x"))}
    return Request(role, "POST", path(PODS, namespace, name, "eviction"), _encode(body))


def read(draw, res, current, namespaces, role) -> Request:
    """GET an object or a list (as a Table sometimes: the printers read every field)."""
    namespace, name = _where(current, draw, namespaces)
    target = path(res, namespace, name if draw.integer(0, 1) else "")
    return Request(role, "GET", target + draw.choice(("", "?limit=2", "?labelSelector=app")),
                   accept=draw.choice(("application/json", "application/json;as=Table;v=v1;g=meta.k8s.io")))


VERBS = (create, create, replace, replace, patch, patch, patch, patch, status, status, delete, scale, evict, read)
