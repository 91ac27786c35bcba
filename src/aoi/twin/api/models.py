"""The last check of an API write: the object about to be stored, defaulted, must validate against the official
Kubernetes Python client's model of its kind (every field's type, the fields a kind requires).

So every object a client can make the twin store is one that kubectl, the Python client and the controllers can read
back. A wrong type is the decoder's 400 (BadRequest, as `cannot unmarshal` on a real server); a missing required field
is a 422 Invalid naming the field. Kinds the client has no model for (Chaos Mesh) are stored as sent.
"""

from __future__ import annotations

import functools

import orjson

from aoi.twin.core import errors
from aoi.twin.core.errors import ApiError
from aoi.twin.core.resources import Resource

SHOWN = 3  # problems one answer names


@functools.cache
def model_of(kind: str, version: str):
    """Return the client's model class of a kind (None when it has none), e.g. V1Deployment, CoreV1Event.

    Example:
        >>> model_of("Event", "v1").__name__, model_of("PodChaos", "v1alpha1")
        ('CoreV1Event', None)
    """
    from kubernetes import client  # imported on the first write: it takes half a second

    name = "CoreV1Event" if kind == "Event" else f"{version.capitalize()}{kind}"
    return getattr(client, name, None)


def check(res: Resource, obj: dict) -> None:
    """Raise the Status a real server answers when obj is not a valid object of its kind; return when it is.

    The model validates strictly, as Go's decoder reads JSON: a timestamp is an RFC 3339 string, an integer is no
    float or string. Fields the client's model does not know are let through (the server drops or keeps them).

    Example:
        >>> from aoi.twin.core.resources import CATALOG
        >>> deployments = CATALOG.find("apps", "v1", "deployments")
        >>> check(deployments, {"metadata": {"name": "a"}, "spec": {"replicas": "2"}})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        aoi.twin.core.errors.ApiError: Deployment ... as a Deployment: spec.replicas: Input should be a valid integer...
        >>> check(deployments, {"metadata": {"name": "a"}, "spec": {}})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        aoi.twin.core.errors.ApiError: Deployment.apps "a" is invalid: spec.selector: Required value, ...
    """
    model = model_of(res.kind, res.version)
    if model is None:
        return
    try:
        model.model_validate_json(orjson.dumps(obj), strict=True)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        problems = [e for e in exc.errors() if e["type"] != "extra_forbidden"] if hasattr(exc, "errors") else []
        if problems:
            raise _status(res, obj, problems) from None


def _status(res: Resource, obj: dict, problems: list[dict]) -> ApiError:
    """Turn a model's validation errors into the Status: 422 for missing required fields only, else 400."""
    fields = [(".".join(str(p) for p in e["loc"]), e) for e in problems]
    wrong = [(f, e) for f, e in fields if e["type"] != "missing"]
    if not wrong:
        name = (obj.get("metadata") or {}).get("name", "")
        return errors.invalid(res.kind, res.group, name, [(f, "Required value") for f, _ in fields[:SHOWN]])
    text = "; ".join(f"{f}: {e['msg']} (got {_short(e.get('input'))})" for f, e in wrong[:SHOWN])
    return errors.bad_request(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: {text}; '
                              "fix the field's type")


def _short(value) -> str:
    """Return a value as a short repr."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
