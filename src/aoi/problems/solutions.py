"""Reference solutions: the actions an SRE who knows the answer would take (for tests, benchmarks and baselines).

These read the problem's expected answers and fault facts, so they are an oracle, not an agent: agents never see
them. Each mitigation uses the same kubectl commands a person would type, through exec_shell.
"""

from __future__ import annotations

import json

from aoi.problems.model import Problem


def action(api: str, *args) -> str:
    """Render one action in AIOpsLab's format (one fenced block, positional arguments).

    Example:
        >>> action("submit", "Yes")
        "```\\nsubmit('Yes')\\n```"
    """
    return "```\n" + f"{api}({', '.join(repr(a) for a in args)})" + "\n```"


def shell(command: str) -> str:
    """Render an exec_shell action for a command (quoted so the parser reads it back verbatim)."""
    return "```\n" + f'exec_shell("{command.replace(chr(34), chr(92) + chr(34))}")' + "\n```"


def _patch(kind: str, name: str, ns: str, patch, patch_type: str = "json") -> str:
    return shell(f"kubectl patch {kind} {name} -n {ns} --type {patch_type} -p '{json.dumps(patch)}'")


def _mongo_fix(p: Problem, script: str) -> list[str]:
    x = p.target.removeprefix("mongodb-")
    steps = [shell(f"kubectl exec deploy/{p.target} -n {p.namespace} -- /bin/bash {script.format(x=x)}")]
    return steps + [shell(f"kubectl rollout restart deployment/{d} -n {p.namespace}")
                    for d in p.fault.expect["dependents"]]


def _tls_fix(p: Problem, conf: str) -> list[str]:
    fixed = conf.replace("requireTLS", "disabled")
    steps = [_patch("configmap", p.fault.expect["configmap"], p.namespace, {"data": {p.fault.expect["key"]: fixed}},
                    "merge"), shell(f"kubectl rollout restart deployment/{p.target} -n {p.namespace}")]
    return steps + [shell(f"kubectl rollout restart deployment/{d} -n {p.namespace}")
                    for d in p.fault.expect["dependents"]]


def _flag_fix(p: Problem, flags_json: str) -> list[str]:
    doc = json.loads(flags_json)
    doc["flags"][p.target]["defaultVariant"] = "off"
    patch = {"data": {p.fault.expect.get("key", "demo.flagd.json"): json.dumps(doc, indent=2)}}
    return [_patch("configmap", p.fault.expect.get("configmap", "flagd-config"), p.namespace, patch, "merge"),
            shell(f"kubectl rollout restart deployment/flagd -n {p.namespace}")]


def mitigation(problem: Problem, read: dict[str, str] | None = None) -> list[str]:
    """Return the fix for a mitigation problem; `read` carries live texts a fix edits (mongod.conf, flag file)."""
    p, e, ns = problem, problem.fault.expect, problem.namespace
    read = read or {}
    fixes = {
        "target_port": lambda: [_patch("service", p.target, ns, [
            {"op": "replace", "path": "/spec/ports/0/targetPort", "value": e["original_target_port"]}])],
        "scale_zero": lambda: [shell(f"kubectl scale deployment/{p.target} -n {ns} "
                                     f"--replicas={e['original_replicas']}")],
        "missing_node": lambda: [_patch("deployment", p.target, ns, [
            {"op": "remove", "path": "/spec/template/spec/nodeSelector"}])],
        "image": lambda: [shell(f"kubectl set image deployment/{p.target} {e['container']}={e['original_image']} "
                                f"-n {ns}")],
        "command": lambda: [_patch("deployment", p.target, ns, [
            {"op": "replace", "path": "/spec/template/spec/containers/0/command", "value": e["original_command"]}])],
        "mongo_revoke": lambda: _mongo_fix(p, "/scripts/revoke-mitigate-admin-{x}-mongo.sh"),
        "mongo_drop_user": lambda: _mongo_fix(p, "/scripts/remove-mitigate-admin-{x}-mongo.sh"),
        "mongo_tls": lambda: _tls_fix(p, read.get("mongod.conf", "")),
        "flagd_flag": lambda: _flag_fix(p, read.get("flags", "{}")),
        "redeploy_without_pv": lambda: [_patch("pv", f"{s.removeprefix('mongodb-')}-pv", ns,
                                               {"spec": {"claimRef": None}}, "merge").replace(f" -n {ns}", "")
                                        for s in e["stores"]]
                                       + [shell(f"kubectl rollout restart deployment -n {ns}")],
    }
    return fixes[p.fault.mechanism]()


def answer(problem: Problem) -> str:
    """Return the correct submit action for a problem's task type."""
    expected = problem.expected_answer()
    return action("submit") if expected is None else action("submit", expected)
