"""Parse API request paths into (group, version, namespace, resource, name, subresource) and an RBAC verb."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from aoi.twin.core import errors
from aoi.twin.core.errors import ApiError
from aoi.twin.core.resources import CATALOG, Resource

# Query parameters the API server decodes as int64 (ListOptions, DeleteOptions, PodLogOptions).
INTEGER_PARAMS = ("timeoutSeconds", "limit", "gracePeriodSeconds", "tailLines", "sinceSeconds", "limitBytes")
CHOICES = {"includeObject": ("None", "Metadata", "Object"),
           "propagationPolicy": ("Orphan", "Background", "Foreground")}
OPTIONS_KINDS = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}
NOT_FOUND = "the server could not find the requested resource"


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
        raise ApiError(404, "NotFound", NOT_FOUND)
    plural, name, sub = (rest + ["", ""])[:3]
    resource = CATALOG.find(group, version, plural)
    if resource is None or (sub and sub not in resource.subresources) or (name and resource.verbs == ("create",)):
        raise ApiError(404, "NotFound", NOT_FOUND)  # a create-only kind has no /NAME paths to serve
    return Route(group, version, resource, namespace, name, sub, query, plural)


def check_query(method: str, query: dict[str, list[str]]) -> None:
    """Refuse query parameters the API server could not decode: integers, enumerations and dryRun.

    Example:
        >>> check_query("GET", {"timeoutSeconds": ["abc"]})
        Traceback (most recent call last):
        ...
        aoi.twin.core.errors.ApiError: invalid value "abc" for query parameter timeoutSeconds: it must be an integer
    """
    for key in INTEGER_PARAMS:
        value = query.get(key, [""])[0]
        if value and not (value.lstrip("-").isascii() and value.lstrip("-").isdigit() and len(value) < 20):
            raise errors.bad_request(f'invalid value "{value[:40]}" for query parameter {key}: it must be an integer')
    for key, allowed in CHOICES.items():
        value = query.get(key, [""])[0]
        if value and value not in allowed:
            raise errors.bad_request(f'invalid value "{value[:40]}" for query parameter {key}: '
                                     f"choose one of {', '.join(allowed)}")
    dry = query.get("dryRun") or []
    if method in OPTIONS_KINDS and any(v != "All" for v in dry):
        raise errors.invalid(OPTIONS_KINDS[method], "meta.k8s.io", "",
                             [("dryRun", f'Unsupported value: {dry!r}: supported values: "All"')])


def verb(method: str, route: Route) -> str:
    """Return the RBAC verb of a request."""
    if method in ("GET", "HEAD"):
        if route.flag("watch"):
            return "watch"
        return "get" if route.name else "list"
    return {"POST": "create", "PUT": "update", "PATCH": "patch",
            "DELETE": "delete" if route.name else "deletecollection"}.get(method, method.lower())
