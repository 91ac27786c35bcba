"""Parse API request paths into (group, version, namespace, resource, name, subresource) and an RBAC verb."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from aoi.twin.errors import ApiError
from aoi.twin.resources import CATALOG, Resource


@dataclass
class Route:
    """A parsed resource request."""

    group: str
    version: str
    resource: Resource | None
    namespace: str
    name: str
    subresource: str
    query: dict[str, list[str]]
    plural: str = ""

    def arg(self, key: str, default: str = "") -> str:
        """Return one query parameter."""
        return self.query.get(key, [default])[0]

    def flag(self, key: str) -> bool:
        """Return a boolean query parameter."""
        return self.arg(key).lower() in ("true", "1")


def split(path: str) -> tuple[list[str], dict[str, list[str]]]:
    """Split a request target into path segments and query parameters."""
    parts = urlsplit(path)
    return [p for p in parts.path.split("/") if p], parse_qs(parts.query, keep_blank_values=True)


def parse(path: str) -> Route | None:
    """Parse a resource path; return None for non-resource paths (discovery, version, openapi)."""
    segments, query = split(path)
    if len(segments) >= 3 and segments[0] == "api":
        group, version, rest = "", segments[1], segments[2:]
    elif len(segments) >= 4 and segments[0] == "apis":
        group, version, rest = segments[1], segments[2], segments[3:]
    else:
        return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    plural, name, sub = (rest + ["", ""])[:3]
    resource = CATALOG.find(group, version, plural)
    if resource is None:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    return Route(group, version, resource, namespace, name, sub, query, plural)


def verb(method: str, route: Route) -> str:
    """Return the RBAC verb of a request."""
    if method == "GET":
        if route.flag("watch"):
            return "watch"
        return "get" if route.name else "list"
    return {"POST": "create", "PUT": "update", "PATCH": "patch",
            "DELETE": "delete" if route.name else "deletecollection"}.get(method, method.lower())
