"""Strict mitigation checks: the faulted component is really restored, and the whole app is healthy.

Each check returns what is still wrong, in words an operator (or an agent reading its feedback) can act on.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import yaml

from aoi.kube import Kube
from aoi.problems.model import Problem
from aoi.problems.parity import all_ready

STUCK = frozenset({"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull"})
MONGO_USER = 'JSON.stringify(db.getUser("{user}"))'


def health(kube: Kube, namespace: str) -> list[str]:
    """Return what keeps a namespace from healthy: unready pods, stuck containers, short Deployments."""
    pods, deployments = kube.list("pods", namespace), kube.list("deployments", namespace)
    if not pods and not deployments:  # a deleted namespace lists empty: nothing runs, so nothing is healthy
        return [f"namespace {namespace} has no pods and no deployments (was it deleted?)"]
    return [why for pod in pods for why in _pod_health(pod)] + [
        why for dep in deployments for why in _deployment_health(dep)]


def _pod_health(pod: dict) -> list[str]:
    """Return what is wrong with one pod: stuck containers, else not Ready (nothing when done or going)."""
    status, name = pod.get("status") or {}, pod["metadata"]["name"]
    if status.get("phase") == "Succeeded" or pod["metadata"].get("deletionTimestamp"):  # done, or on its way out
        return []
    waits = [(cs["name"], ((cs.get("state") or {}).get("waiting") or {}).get("reason"))
             for cs in status.get("containerStatuses") or []]
    stuck = [f"pod {name}: container {box} is {reason}" for box, reason in waits if reason in STUCK]
    return stuck or ([] if all_ready(pod) else [f"pod {name} is not Ready (phase {status.get('phase')})"])


def _deployment_health(dep: dict) -> list[str]:
    """Return what is wrong with one Deployment: fewer available replicas than it wants."""
    replicas = dep["spec"].get("replicas")
    want, have = replicas if replicas is not None else 1, (dep.get("status") or {}).get("availableReplicas") or 0
    return [] if have == want else [f"deployment {dep['metadata']['name']} has {have}/{want} replicas available"]


def pods_ready(kube: Kube, namespace: str, deployment: str, scheduled: bool = False) -> list[str]:
    """Return what keeps a Deployment's pods from being (scheduled and) Ready."""
    pods = [p for p in kube.pods_of("deployments", namespace, deployment) if not p["metadata"].get("deletionTimestamp")]
    if not pods:
        return [f"deployment {deployment} has no pods"]
    found = [f"pod {p['metadata']['name']} is not scheduled on any node" for p in pods
             if scheduled and not p["spec"].get("nodeName")]
    return found + [f"pod {p['metadata']['name']} of {deployment} is not Ready" for p in pods if not all_ready(p)]


def _template(kube: Kube, p: Problem) -> dict:
    """Return the pod template spec of the target Deployment."""
    return kube.get("deployments", p.namespace, p.target)["spec"]["template"]["spec"]


def _container(kube: Kube, p: Problem) -> dict:
    """Return the faulted container of the target Deployment (ValueError when it has none left)."""
    boxes = _template(kube, p).get("containers") or []
    if not boxes:
        raise ValueError(f"deployment {p.target} has no containers in its pod template")
    return next((b for b in boxes if b["name"] == p.fault.expect["container"]), boxes[0])


def target_port(kube: Kube, p: Problem) -> list[str]:
    """Check every port of the Service reaches a port its pods listen on."""
    svc = kube.get("services", p.namespace, p.target)["spec"]
    pods = kube.list("pods", p.namespace, labels=svc.get("selector") or {})
    if not pods:
        return [f"service {p.target} selects no pods"]
    ports = [cp for pod in pods for b in pod["spec"]["containers"] for cp in b.get("ports") or []]
    numbers = {cp.get("containerPort") for cp in ports} or {p.fault.expect["original_target_port"]}  # none declared
    names = {cp["name"] for cp in ports if cp.get("name")}
    if not svc.get("ports"):
        return [f"service {p.target} has no ports"]
    return [f"service {p.target} port {sp.get('port')} targets {sp.get('targetPort')!r}, but its pods listen on "
            f"{sorted(numbers)}" for sp in svc["ports"] if not _reaches(sp.get("targetPort"), numbers, names)]


def _reaches(target, numbers: set, names: set) -> bool:
    """Tell whether a Service port's targetPort names or numbers a port the pods declare.

    Example:
        >>> _reaches("9090", {9090}, set()), _reaches("http", {80}, {"http"}), _reaches(9999, {9090}, set())
        (True, True, False)
    """
    return target in numbers or target in names or (isinstance(target, str) and target.isdigit()
                                                    and int(target) in numbers)


def scale_zero(kube: Kube, p: Problem) -> list[str]:
    """Check the Deployment is scaled back up and its pods are Ready."""
    want = p.fault.expect["original_replicas"]
    have = kube.get("deployments", p.namespace, p.target)["spec"].get("replicas") or 0
    if have < want:
        return [f"deployment {p.target} has {have} replicas, expected at least {want}"]
    return pods_ready(kube, p.namespace, p.target)


def missing_node(kube: Kube, p: Problem) -> list[str]:
    """Check the injected nodeSelector is gone and the pods are scheduled and Ready."""
    selector = _template(kube, p).get("nodeSelector") or {}
    if selector != dict(p.fault.expect["original_node_selector"]):
        return [f"deployment {p.target} still has nodeSelector {selector}"]
    return pods_ready(kube, p.namespace, p.target, scheduled=True)


def image(kube: Kube, p: Problem) -> list[str]:
    """Check the container image is the original one and the pods are Ready."""
    box, want = _container(kube, p), p.fault.expect["original_image"]
    if box.get("image") != want:
        return [f"container {box['name']} of deployment {p.target} runs image {box.get('image')}, expected {want}"]
    return pods_ready(kube, p.namespace, p.target)


def command(kube: Kube, p: Problem) -> list[str]:
    """Check the container command is the original one and the pods are Ready."""
    box, want = _container(kube, p), list(p.fault.expect["original_command"])
    if list(box.get("command") or []) != want:
        return [f"container {box['name']} of deployment {p.target} runs {box.get('command')}, expected {want}"]
    return pods_ready(kube, p.namespace, p.target)


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


def mongo_role(kube: Kube, p: Problem) -> list[str]:
    """Check, from inside the MongoDB pod, that the app's user exists with its role on its database."""
    user, db, role = (p.fault.expect[k] for k in ("user", "db", "role"))
    pods = [pod for pod in kube.pods_of("deployments", p.namespace, p.target)
            if (pod.get("status") or {}).get("phase") == "Running"]
    if not pods:
        return [f"{p.target} has no running pod to ask for user {user}"]
    argv = ["mongo", "admin", "-u", "root", "-p", "root", "--authenticationDatabase", "admin", "--quiet", "--eval",
            MONGO_USER.format(user=user)]
    try:
        _, out, err = kube.exec(p.namespace, pods[0]["metadata"]["name"], p.fault.expect["container"], argv)
        doc = mongo_user(out + err)
    except Exception as exc:  # noqa: BLE001 - any failure to read the user means we cannot say it is restored
        return [f"could not read user {user} from {p.target}: {exc}"]
    if doc is None:
        return [f"user {user} does not exist in {p.target}"]
    if not any(r.get("role") == role and r.get("db") == db for r in doc.get("roles") or []):
        return [f"user {user} in {p.target} lacks role {role} on {db}"]
    return []


def _config_text(kube: Kube, p: Problem) -> str:
    """Return the faulted file from its ConfigMap (ValueError naming the key when it is gone)."""
    name, key = p.fault.expect["configmap"], p.fault.expect["key"]
    text = (kube.get("configmaps", p.namespace, name).get("data") or {}).get(key)
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


def mongo_tls(kube: Kube, p: Problem) -> list[str]:
    """Check mongod no longer requires TLS and the MongoDB's clients are Ready."""
    expect = p.fault.expect
    try:
        conf = _mapping(yaml.safe_load(_config_text(kube, p)), "mongod.conf")
        tls = _mapping(_mapping(conf.get("net"), "net of mongod.conf").get("tls"), "net.tls of mongod.conf")
    except (yaml.YAMLError, ValueError) as exc:  # mongod refuses such a file: it cannot be what restored the MongoDB
        return [f"mongod.conf of {p.target} is unusable: {one_line(exc)}"]
    mode = tls.get("mode")
    found = [f"{p.target} still has net.tls.mode {mode} in its mongod.conf"] if mode == expect["mode"] else []
    return found + [why for dep in expect["dependents"] for why in pods_ready(kube, p.namespace, dep)]


def one_line(exc: Exception) -> str:
    """Return an exception's message on one line.

    Example:
        >>> one_line(ValueError("a\\n  b"))
        'a b'
    """
    return " ".join(str(exc).split())


def flagd_flag(kube: Kube, p: Problem) -> list[str]:
    """Check the flag's defaultVariant is back to "off"."""
    expect = p.fault.expect
    try:
        doc = _mapping(json.loads(_config_text(kube, p)), expect["key"])
    except ValueError as exc:  # JSONDecodeError is one: flagd would refuse the file
        return [f"{expect['key']} in ConfigMap {expect['configmap']} is unusable: {one_line(exc)}"]
    flag = _mapping(_mapping(doc.get("flags"), "flags").get(expect["flag"]), f"flag {expect['flag']}")
    variant = flag.get("defaultVariant")
    return [] if variant == "off" else [f"flag {expect['flag']} is still {variant!r} in {expect['configmap']}"]


def redeploy_without_pv(kube: Kube, p: Problem) -> list[str]:
    """Check every PersistentVolumeClaim is Bound and every MongoDB is Ready."""
    phases = {c["metadata"]["name"]: (c.get("status") or {}).get("phase")
              for c in kube.list("persistentvolumeclaims", p.namespace)}
    found = [f"PersistentVolumeClaim {name} is {phase}" for name, phase in phases.items() if phase != "Bound"]
    return found + [why for store in p.fault.expect["stores"] for why in pods_ready(kube, p.namespace, store)]


RESTORED: dict[str, Callable[[Kube, Problem], list[str]]] = {
    "target_port": target_port, "scale_zero": scale_zero, "missing_node": missing_node, "image": image,
    "command": command, "mongo_revoke": mongo_role, "mongo_drop_user": mongo_role, "mongo_tls": mongo_tls,
    "flagd_flag": flagd_flag, "redeploy_without_pv": redeploy_without_pv,
}
