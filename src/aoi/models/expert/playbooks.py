"""Mitigation playbooks: kubectl commands built from the evidence of a diagnosis (never from problem knowledge)."""

from __future__ import annotations

import json
import shlex

RESTART = "kubectl rollout restart deployment {name} -n {ns}"


def fix(kind: str, component: str, facts: dict, ns: str) -> list[str]:
    """Return the commands that undo a symptom class, or [] when the evidence does not yet say how.

    Example:
        >>> fix("replicas_zero", "api", {"replicas": 1}, "shop")
        ['kubectl scale deployment api -n shop --replicas=1']
    """
    builder = BUILDERS.get(kind)
    return builder(component, facts, ns) if builder else []


def _json(value) -> str:
    """Return a value as compact JSON quoted for the shell."""
    return shlex.quote(json.dumps(value, separators=(",", ":")))


def _port(component: str, facts: dict, ns: str) -> list[str]:
    op = [{"op": "replace", "path": f"/spec/ports/{facts['index']}/targetPort", "value": facts["expected"]}]
    return [f"kubectl patch service {component} -n {ns} --type json -p {_json(op)}"]


def _scale(component: str, facts: dict, ns: str) -> list[str]:
    return [f"kubectl scale deployment {component} -n {ns} --replicas={facts.get('replicas', 1)}"]


def _node(component: str, facts: dict, ns: str) -> list[str]:
    op = [{"op": "remove", "path": "/spec/template/spec/nodeSelector"}]
    return [f"kubectl patch deployment {component} -n {ns} --type json -p {_json(op)}"]


def _claims(component: str, facts: dict, ns: str) -> list[str]:
    volumes = " ".join(facts.get("volumes") or [])
    op = [{"op": "remove", "path": "/spec/claimRef"}]
    return [f"kubectl patch pv {volumes} --type json -p {_json(op)}"] if volumes else []


def _image(component: str, facts: dict, ns: str) -> list[str]:
    return [f"kubectl set image deployment/{component} {facts['container']}={facts['expected']} -n {ns}"]


def _command(component: str, facts: dict, ns: str) -> list[str]:
    op = [{"op": "replace", "path": "/spec/template/spec/containers/0/command", "value": facts["expected"]}]
    return [f"kubectl patch deployment {component} -n {ns} --type json -p {_json(op)}"]


def _database(component: str, facts: dict, ns: str) -> list[str]:
    """Run the mounted script that restores the app user (or its role), then restart the clients."""
    script = facts.get("script")
    if not script:
        return []
    run = [f"kubectl exec deploy/{component} -n {ns} -- /bin/bash {script}"]
    return run + [RESTART.format(name=c, ns=ns) for c in facts.get("clients") or []]


def _tls(component: str, facts: dict, ns: str) -> list[str]:
    """Write the database config back without the TLS requirement, then restart the database and its clients."""
    if not facts.get("configmap") or not facts.get("fixed"):
        return []
    patch = _json({"data": {facts["key"]: facts["fixed"]}})
    restarts = [RESTART.format(name=n, ns=ns) for n in [component, *(facts.get("clients") or [])]]
    return [f"kubectl patch configmap {facts['configmap']} -n {ns} --type merge -p {patch}"] + restarts


def _flag(component: str, facts: dict, ns: str) -> list[str]:
    """Switch the flag off in its ConfigMap and restart the flag service that reads it."""
    if not facts.get("configmap") or not facts.get("fixed"):
        return []
    patch = _json({"data": {facts["key"]: facts["fixed"]}})
    readers = [RESTART.format(name=n, ns=ns) for n in facts.get("readers") or []]
    return [f"kubectl patch configmap {facts['configmap']} -n {ns} --type merge -p {patch}"] + readers


def _chaos(component: str, facts: dict, ns: str) -> list[str]:
    return [f"kubectl delete {facts['kind']} {facts['name']} -n {ns}"]


def _restart(component: str, facts: dict, ns: str) -> list[str]:
    return [RESTART.format(name=component, ns=ns)]


BUILDERS = {
    "port_mismatch": _port, "replicas_zero": _scale, "unschedulable_node": _node, "stale_claim": _claims,
    "image_unlike_siblings": _image, "command_unlike_siblings": _command, "db_unauthorized": _database,
    "db_auth_failed": _database, "db_tls": _tls, "flag_enabled": _flag, "chaos": _chaos, "network_chaos": _chaos,
    "crash_loop": _restart, "not_ready": _restart, "restarted": _restart,
}
