"""Resolve a family and a target into the fault to inject (injector kwargs and expected originals) and the answers."""

from __future__ import annotations

from collections.abc import Callable

from aoi.apps.catalog import load_app
from aoi.problems import targets as t
from aoi.problems.families import FLAG_ANSWERS, FLAG_VARIANTS
from aoi.problems.model import Answers, Family, Fault, frozen

FLOWER_NAMESPACE = "docker"  # AIOpsLab's name for the Docker Compose "namespace" of Flower
MONGO_FAMILIES = ("mongo_revoke", "mongo_drop_user")  # localization accepts mongodb-X and X (AIOpsLab special case)
Facts = tuple[dict, dict]  # (extra injector kwargs, facts for the oracles)


def namespace(app: str) -> str:
    """Return the namespace an app runs in."""
    return FLOWER_NAMESPACE if app == "flower" else load_app(app).namespace


def _target_port(app: str, target: str, params: dict) -> Facts:
    return {}, {"original_target_port": load_app(app).components[target]["port"]}


def _scale(app: str, target: str, params: dict) -> Facts:
    return {}, {"original_replicas": t.deployment(app, target)["spec"].get("replicas", 1)}


def _node(app: str, target: str, params: dict) -> Facts:
    spec = t.deployment(app, target)["spec"]["template"]["spec"]
    return {}, {"original_node_selector": spec.get("nodeSelector") or {}}


def _image(app: str, target: str, params: dict) -> Facts:
    box = t.main_container(app, target)
    return {"container": box["name"]}, {"container": box["name"], "original_image": box["image"]}


def _command(app: str, target: str, params: dict) -> Facts:
    """Swap in another Go service's binary: `value`, or the first other one when the target runs `value`."""
    box = t.main_container(app, target)
    binaries = [t.main_container(app, name)["command"][0] for name in t.RULES["go_service"][1](app)]
    value = params["value"] if params["value"] != box["command"] else [next(b for b in binaries
                                                                           if [b] != box["command"])]
    return ({"container": box["name"], "value": value},
            {"container": box["name"], "original_command": list(box["command"])})


def _mongo(script: str) -> Callable[[str, str, dict], Facts]:
    def facts(app: str, target: str, params: dict) -> Facts:
        clients = t.mongo_clients(app, target)
        return {}, {"user": clients[0][1]["user"], "db": clients[0][1]["db"], "role": "readWrite",
                    "dependents": [c for c, _ in clients], "container": t.main_container(app, target)["name"],
                    "script": script.format(x=target.removeprefix("mongodb-"))}
    return facts


def _tls(app: str, target: str, params: dict) -> Facts:
    config = load_app(app).components[target]["config"]
    return {}, {"configmap": config["configmap"], "key": config["key"], "mode": "requireTLS",
                "dependents": t.callers(app, target)}


def _flag(app: str, target: str, params: dict) -> Facts:
    variants = t.flag_definitions(app)[target]["variants"]
    variant = FLAG_VARIANTS.get(target) or ("on" if "on" in variants else next(v for v in variants if v != "off"))
    return {"variant": variant}, {"flag": target, **t.flag_source(app)}


def _chaos(app: str, target: str, params: dict) -> Facts:
    extra = {"container_names": [t.main_container(app, target)["name"]]} if params["action"] == "container-kill" else {}
    return extra, {"selector": {load_app(app).service_label: target}}


def _redeploy(app: str, target: str | None, params: dict) -> Facts:
    return {}, {"stores": [n for n, c in load_app(app).components.items() if c.get("protocol") == "mongodb"]}


FACTS: dict[str, Callable[[str, str, dict], Facts]] = {
    "target_port": _target_port, "scale_zero": _scale, "missing_node": _node, "image": _image,
    "command": _command, "mongo_tls": _tls, "flagd_flag": _flag, "pod_chaos": _chaos, "network_chaos": _chaos,
    "mongo_revoke": _mongo("/scripts/revoke-admin-{x}-mongo.sh"),
    "mongo_drop_user": _mongo("/scripts/remove-admin-mongo.sh"), "redeploy_without_pv": _redeploy,
}


def fault(family: Family, target: str | None) -> Fault:
    """Return the fault of a family aimed at a target, with the originals the strict oracle compares against."""
    params, expect = dict(family.params), {}
    facts = FACTS.get(family.mechanism)
    if facts is not None:
        extra, expect = facts(family.app, target, params)
        params.update(extra)
    return Fault(mechanism=family.mechanism, namespace=namespace(family.app), target=target, params=frozen(params),
                 expect=frozen(expect))


def localization(family: Family, target: str | None) -> tuple[str, ...]:
    """Return the accepted localization answers for a target, canonical first."""
    if target is None:
        return ()
    if family.mechanism == "flagd_flag":
        return (FLAG_ANSWERS.get(target) or t.flag_reader(family.app, target),)
    if family.mechanism in MONGO_FAMILIES:
        return (target, target.removeprefix("mongodb-"))
    return (target,)


def answers(family: Family, target: str | None) -> Answers:
    """Return what a correct agent submits for each task type of the family."""
    level, kind = family.analysis or (None, None)
    return Answers(family.detection, localization(family, target), level, kind)
