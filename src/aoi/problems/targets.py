"""Which components a family may target, and the facts about a target that its fault and oracles need.

Everything is read from the twin's app catalog (ordinary manifests plus app.yaml), so a new service in an app's
manifests becomes a valid target without touching this module.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable

from aoi.apps.catalog import App, load_app

GO_IMAGE = "yinfangchen/hotelreservation:*"  # the one image every HotelReservation Go service runs


def _app(name: str) -> App:
    return load_app(name)


def deployments(app: str) -> list[dict]:
    """Return the app's Deployment manifests in apply order."""
    return [d for d in _app(app).documents if d.get("kind") == "Deployment"]


def deployment(app: str, name: str) -> dict:
    """Return one Deployment manifest of the app; KeyError if it has none by that name."""
    for doc in deployments(app):
        if doc["metadata"]["name"] == name:
            return doc
    raise KeyError(f"{app} has no Deployment named {name!r}")


def main_container(app: str, name: str) -> dict:
    """Return the first container of a Deployment's pod template."""
    return deployment(app, name)["spec"]["template"]["spec"]["containers"][0]


def flag_definitions(app: str) -> dict[str, dict]:
    """Return the flags the app's flagd ConfigMap defines (name -> definition), in file order."""
    source = flag_source(app)
    for doc in _app(app).documents:
        if doc.get("kind") == "ConfigMap" and doc["metadata"]["name"] == source["configmap"]:
            return json.loads(doc["data"][source["key"]])["flags"]
    raise KeyError(f"{app}: ConfigMap {source['configmap']!r} not found in its manifests")


def flags(app: str) -> list[str]:
    """Return the flag names the app's flagd ConfigMap defines, in file order."""
    return list(flag_definitions(app))


def flag_source(app: str) -> dict:
    """Return {configmap, key, deployment} of the app's flagd flag file."""
    name, comp = next((n, c) for n, c in _app(app).components.items() if c.get("protocol") == "flagd")
    return {"configmap": comp["config"]["configmap"], "key": comp["config"]["key"], "deployment": name}


def flag_reader(app: str, flag: str) -> str:
    """Return the component whose app.yaml entry lists the flag."""
    for name, comp in _app(app).components.items():
        if flag in (comp.get("flags") or []):
            return name
    raise KeyError(f"{app}: no component reads flag {flag!r}; add it to a component's `flags` in app.yaml")


def mongo_clients(app: str, store: str) -> list[tuple[str, dict]]:
    """Return (component, mongo binding) for each component whose `mongo.service` is the store."""
    return [(n, c["mongo"]) for n, c in _app(app).components.items() if (c.get("mongo") or {}).get("service") == store]


def callers(app: str, component: str) -> list[str]:
    """Return the components that call the given one."""
    return [n for n, c in _app(app).components.items() if component in (c.get("calls") or [])]


def _components(app: str, keep: Callable[[dict], bool]) -> list[str]:
    return [name for name, comp in _app(app).components.items() if keep(comp)]


def _go_services(app: str) -> list[str]:
    return [d["metadata"]["name"] for d in deployments(app)
            if fnmatch.fnmatchcase(d["spec"]["template"]["spec"]["containers"][0].get("image", ""), GO_IMAGE)]


def _served_deployments(app: str) -> list[str]:
    names = {d["metadata"]["name"] for d in deployments(app)}
    return [name for name in _app(app).components if name in names]


RULES: dict[str, tuple[str, Callable[[str], list[str]]]] = {
    "thrift": ("any Thrift service", lambda a: _components(a, lambda c: c.get("protocol") == "thrift")),
    "deployment": ("any Deployment", lambda a: [d["metadata"]["name"] for d in deployments(a)]),
    "auth_mongodb": ("any MongoDB with auth", lambda a: _components(a, lambda c: c.get("protocol") == "mongodb"
                                                                      and c.get("auth") is True)),
    "mongodb": ("any MongoDB", lambda a: _components(a, lambda c: c.get("protocol") == "mongodb")),
    "go_service": ("any Go service", _go_services),
    "service": ("any service with a Deployment", _served_deployments),
    "flag": ("any flagd flag", flags),
}


def valid_targets(rule: str, app: str, defaults: tuple[str | None, ...]) -> tuple[str, ...]:
    """Return the targets a family accepts: the rule's components, or just its defaults for fixed families.

    Example:
        >>> valid_targets("auth_mongodb", "hotel-reservation", ("mongodb-geo",))
        ('mongodb-geo', 'mongodb-rate')
    """
    if rule == "none":
        return ()
    if rule == "fixed":
        return tuple(t for t in defaults if t)
    return tuple(RULES[rule][1](app))


def describe(rule: str) -> str:
    """Return the rule in words, for listings and error messages."""
    return {"none": "takes no target", "fixed": "its default target only"}.get(rule) or RULES[rule][0]
