"""Strict mitigation checks: the faulted component is really restored, and the whole app is healthy.

Each check returns what is still wrong, in words an operator (or an agent reading its feedback) can act on.
"""

from __future__ import annotations

import json
from typing import Callable

import yaml

from aoi.problems.cluster import Cluster
from aoi.problems.model import Problem

STUCK = frozenset({"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull"})
MONGO_USER = 'JSON.stringify(db.getUser("{user}"))'


def health(cluster: Cluster, namespace: str) -> list[str]:
    """Return what keeps a namespace from healthy: unready pods, stuck containers, short Deployments."""
    pods, deployments = cluster.pods(namespace), cluster.deployments(namespace)
    if not pods and not deployments:  # a deleted namespace lists empty: nothing runs, so nothing is healthy
        return [f"namespace {namespace} has no pods and no deployments (was it deleted?)"]
    found = []
    for pod in pods:
        if pod.status.phase == "Succeeded" or pod.metadata.deletion_timestamp:  # done, or on its way out
            continue
        statuses = pod.status.container_statuses or []
        stuck = [cs for cs in statuses if cs.state and cs.state.waiting and cs.state.waiting.reason in STUCK]
        if stuck:
            found += [f"pod {pod.metadata.name}: container {cs.name} is {cs.state.waiting.reason}" for cs in stuck]
        elif not statuses or not all(cs.ready for cs in statuses):
            found.append(f"pod {pod.metadata.name} is not Ready (phase {pod.status.phase})")
    for dep in deployments:
        want, have = dep.spec.replicas if dep.spec.replicas is not None else 1, dep.status.available_replicas or 0
        if have != want:
            found.append(f"deployment {dep.metadata.name} has {have}/{want} replicas available")
    return found


def pods_ready(cluster: Cluster, namespace: str, deployment: str, scheduled: bool = False) -> list[str]:
    """Return what keeps a Deployment's pods from being (scheduled and) Ready."""
    pods = [p for p in cluster.deployment_pods(namespace, deployment) if not p.metadata.deletion_timestamp]
    if not pods:
        return [f"deployment {deployment} has no pods"]
    found = [f"pod {p.metadata.name} is not scheduled on any node" for p in pods if scheduled and not p.spec.node_name]
    return found + [f"pod {p.metadata.name} of {deployment} is not Ready" for p in pods
                    if not (p.status.container_statuses and all(cs.ready for cs in p.status.container_statuses))]


def _container(cluster: Cluster, p: Problem):
    """Return the faulted container of the target Deployment (ValueError when it has none left)."""
    boxes = cluster.deployment(p.namespace, p.target).spec.template.spec.containers or []
    if not boxes:
        raise ValueError(f"deployment {p.target} has no containers in its pod template")
    return next((b for b in boxes if b.name == p.fault.expect["container"]), boxes[0])


def target_port(cluster: Cluster, p: Problem) -> list[str]:
    """Check every port of the Service reaches a port its pods listen on."""
    svc = cluster.service(p.namespace, p.target)
    pods = cluster.pods(p.namespace, svc.spec.selector or {})
    if not pods:
        return [f"service {p.target} selects no pods"]
    boxes = [b for pod in pods for b in pod.spec.containers]
    declared = {cp.container_port for b in boxes for cp in b.ports or []}
    numbers = declared or {p.fault.expect["original_target_port"]}  # pods that declare no port: trust the catalog
    names = {cp.name for b in boxes for cp in b.ports or [] if cp.name}
    if not svc.spec.ports:
        return [f"service {p.target} has no ports"]
    return [f"service {p.target} port {sp.port} targets {sp.target_port!r}, but its pods listen on {sorted(numbers)}"
            for sp in svc.spec.ports if sp.target_port not in numbers and sp.target_port not in names
            and not (isinstance(sp.target_port, str) and sp.target_port.isdigit() and int(sp.target_port) in numbers)]


def scale_zero(cluster: Cluster, p: Problem) -> list[str]:
    """Check the Deployment is scaled back up and its pods are Ready."""
    want, have = p.fault.expect["original_replicas"], cluster.deployment(p.namespace, p.target).spec.replicas or 0
    if have < want:
        return [f"deployment {p.target} has {have} replicas, expected at least {want}"]
    return pods_ready(cluster, p.namespace, p.target)


def missing_node(cluster: Cluster, p: Problem) -> list[str]:
    """Check the injected nodeSelector is gone and the pods are scheduled and Ready."""
    selector = cluster.deployment(p.namespace, p.target).spec.template.spec.node_selector or {}
    if selector != dict(p.fault.expect["original_node_selector"]):
        return [f"deployment {p.target} still has nodeSelector {selector}"]
    return pods_ready(cluster, p.namespace, p.target, scheduled=True)


def image(cluster: Cluster, p: Problem) -> list[str]:
    """Check the container image is the original one and the pods are Ready."""
    box, want = _container(cluster, p), p.fault.expect["original_image"]
    if box.image != want:
        return [f"container {box.name} of deployment {p.target} runs image {box.image}, expected {want}"]
    return pods_ready(cluster, p.namespace, p.target)


def command(cluster: Cluster, p: Problem) -> list[str]:
    """Check the container command is the original one and the pods are Ready."""
    box, want = _container(cluster, p), list(p.fault.expect["original_command"])
    if list(box.command or []) != want:
        return [f"container {box.name} of deployment {p.target} runs {box.command}, expected {want}"]
    return pods_ready(cluster, p.namespace, p.target)


def mongo_user(output: str) -> dict | None:
    """Return the user document the mongo shell printed as JSON (None when it printed null).

    Example:
        >>> mongo_user('{"user": "admin", "roles": [{"role": "readWrite", "db": "geo-db"}]}')["roles"][0]["db"]
        'geo-db'
        >>> mongo_user("null") is None
        True
    """
    for line in reversed(output.strip().splitlines()):
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if doc is None or isinstance(doc, dict):
            return doc
    raise ValueError(f"no user document in the mongo output: {output.strip()[:200]!r}")


def mongo_role(cluster: Cluster, p: Problem) -> list[str]:
    """Check, from inside the MongoDB pod, that the app's user exists with its role on its database."""
    user, db, role = (p.fault.expect[k] for k in ("user", "db", "role"))
    pods = [pod for pod in cluster.deployment_pods(p.namespace, p.target) if pod.status.phase == "Running"]
    if not pods:
        return [f"{p.target} has no running pod to ask for user {user}"]
    argv = ["mongo", "admin", "-u", "root", "-p", "root", "--authenticationDatabase", "admin", "--quiet", "--eval",
            MONGO_USER.format(user=user)]
    try:
        doc = mongo_user(cluster.exec(p.namespace, pods[0].metadata.name, p.fault.expect["container"], argv))
    except Exception as exc:  # any failure to read the user means we cannot say it is restored
        return [f"could not read user {user} from {p.target}: {exc}"]
    if doc is None:
        return [f"user {user} does not exist in {p.target}"]
    if not any(r.get("role") == role and r.get("db") == db for r in doc.get("roles") or []):
        return [f"user {user} in {p.target} lacks role {role} on {db}"]
    return []


def _config_text(cluster: Cluster, p: Problem) -> str:
    """Return the faulted file from its ConfigMap (ValueError naming the key when it is gone)."""
    name, key = p.fault.expect["configmap"], p.fault.expect["key"]
    text = (cluster.config_map(p.namespace, name).data or {}).get(key)
    if text is None:
        raise ValueError(f"ConfigMap {name} has no key {key}")
    return text


def _mapping(doc, what: str) -> dict:
    """Return doc when it is a mapping (an empty file counts as an empty one), else say what it is instead."""
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ValueError(f"{what} holds a {type(doc).__name__}, not a mapping")
    return doc


def mongo_tls(cluster: Cluster, p: Problem) -> list[str]:
    """Check mongod no longer requires TLS and the MongoDB's clients are Ready."""
    expect = p.fault.expect
    try:
        conf = _mapping(yaml.safe_load(_config_text(cluster, p)), "mongod.conf")
        tls = _mapping(_mapping(conf.get("net"), "net of mongod.conf").get("tls"), "net.tls of mongod.conf")
    except (yaml.YAMLError, ValueError) as exc:  # mongod refuses such a file: it cannot be what restored the MongoDB
        return [f"mongod.conf of {p.target} is unusable: {one_line(exc)}"]
    mode = tls.get("mode")
    found = [f"{p.target} still has net.tls.mode {mode} in its mongod.conf"] if mode == expect["mode"] else []
    return found + [why for dep in expect["dependents"] for why in pods_ready(cluster, p.namespace, dep)]


def one_line(exc: Exception) -> str:
    """Return an exception's message on one line.

    Example:
        >>> one_line(ValueError("a\\n  b"))
        'a b'
    """
    return " ".join(str(exc).split())


def flagd_flag(cluster: Cluster, p: Problem) -> list[str]:
    """Check the flag's defaultVariant is back to "off"."""
    expect = p.fault.expect
    try:
        doc = _mapping(json.loads(_config_text(cluster, p)), expect["key"])
    except ValueError as exc:  # JSONDecodeError is one: flagd would refuse the file
        return [f"{expect['key']} in ConfigMap {expect['configmap']} is unusable: {one_line(exc)}"]
    flag = _mapping(_mapping(doc.get("flags"), "flags").get(expect["flag"]), f"flag {expect['flag']}")
    variant = flag.get("defaultVariant")
    return [] if variant == "off" else [f"flag {expect['flag']} is still {variant!r} in {expect['configmap']}"]


def redeploy_without_pv(cluster: Cluster, p: Problem) -> list[str]:
    """Check every PersistentVolumeClaim is Bound and every MongoDB is Ready."""
    found = [f"PersistentVolumeClaim {c.metadata.name} is {c.status.phase}" for c in cluster.claims(p.namespace)
             if c.status.phase != "Bound"]
    return found + [why for store in p.fault.expect["stores"] for why in pods_ready(cluster, p.namespace, store)]


RESTORED: dict[str, Callable[[Cluster, Problem], list[str]]] = {
    "target_port": target_port, "scale_zero": scale_zero, "missing_node": missing_node, "image": image,
    "command": command, "mongo_revoke": mongo_role, "mongo_drop_user": mongo_role, "mongo_tls": mongo_tls,
    "flagd_flag": flagd_flag, "redeploy_without_pv": redeploy_without_pv,
}
