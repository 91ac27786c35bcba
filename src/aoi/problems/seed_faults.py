"""Each aoi.faults mechanism rendered as the operations an admin would type, and the symptoms it shows.

A renderer takes the problem of one family instance and returns (fault operations, symptoms): kubectl command lines
(with stdin for a manifest) or Chaos Mesh objects created through the API, computed from the app's manifests so they
do what the injector does; symptoms are read-only kubectl commands with a regex that matches only while the fault is
in place (current state, never old events, so they clear once fixed).
"""

from __future__ import annotations

import json
import re
import shlex

import yaml

from aoi.apps.catalog import load_app
from aoi.problems import targets as t
from aoi.problems.model import Problem
from aoi.problems.scenarios import Symptom

CHAOS_NAMES = {"pod-failure": "pod-failure-experiment", "container-kill": "container-kill", "pod-kill": "pod-kill",
               "loss": "loss", "delay": "delay"}


def kubectl(*words: str) -> str:
    """Return a kubectl command line with each word shell-quoted.

    Example:
        >>> kubectl("patch", "cm", "x", "-p", '{"a": 1}')
        'kubectl patch cm x -p \\'{"a": 1}\\''
    """
    return " ".join(["kubectl", *(shlex.quote(w) for w in words)])


def _selector(app: str, deployment: str) -> str:
    """Return the -l value that selects a Deployment's pods."""
    labels = t.deployment(app, deployment)["spec"]["selector"]["matchLabels"]
    return ",".join(f"{k}={v}" for k, v in labels.items())


def _configmap(app: str, name: str) -> dict:
    """Return one ConfigMap manifest of the app."""
    return next(d for d in load_app(app).documents if d.get("kind") == "ConfigMap" and d["metadata"]["name"] == name)


def _service(app: str, name: str) -> dict:
    """Return one Service manifest of the app."""
    return next(d for d in load_app(app).documents if d.get("kind") == "Service" and d["metadata"]["name"] == name)


def _recreated(p: Problem, field: str, value) -> list[dict]:
    """Return the ops that delete a Deployment and create it again with one changed pod-template field."""
    manifest = json.loads(json.dumps(t.deployment(p.app, p.target)))
    manifest["metadata"]["namespace"] = p.namespace
    spec = manifest["spec"]["template"]["spec"]
    if field == "nodeSelector":
        spec["nodeSelector"] = value
    else:
        spec["containers"][0][field] = value
    return [{"kubectl": kubectl("delete", "deployment", p.target, "-n", p.namespace)},
            {"kubectl": kubectl("create", "-n", p.namespace, "-f", "-"), "stdin": json.dumps(manifest, indent=2)}]


def _pods(p: Problem, deployment: str, pattern: str, what: str) -> Symptom:
    """Return a symptom read from a Deployment's pods."""
    return Symptom(kubectl("get", "pods", "-n", p.namespace, "-l", _selector(p.app, deployment)), pattern, what)


def _logs(p: Problem, deployment: str, pattern: str, what: str) -> Symptom:
    """Return a symptom read from a Deployment's logs."""
    return Symptom(kubectl("logs", f"deploy/{deployment}", "-n", p.namespace, "--tail", "50"), pattern, what)


def _target_port(p: Problem) -> tuple[list[dict], list[Symptom]]:
    ports = _service(p.app, p.target)["spec"]["ports"]
    patch = [{"op": "replace", "path": f"/spec/ports/{i}/targetPort", "value": p.fault.params["port"]}
             for i in range(len(ports))]
    ops = [{"kubectl": kubectl("patch", "service", p.target, "-n", p.namespace, "--type", "json", "-p",
                               json.dumps(patch))}]
    port = p.fault.params["port"]
    return ops, [Symptom(kubectl("get", "endpoints", p.target, "-n", p.namespace), rf":{port}\b",
                         f"the endpoints of {p.target} point at port {port}, where nothing listens")]


def _scale_zero(p: Problem) -> tuple[list[dict], list[Symptom]]:
    ops = [{"kubectl": kubectl("scale", f"deployment/{p.target}", "-n", p.namespace, "--replicas=0")}]
    return ops, [Symptom(kubectl("get", "deployment", p.target, "-n", p.namespace), rf"(?m)^{p.target}\s+0/0\s",
                         f"deployment {p.target} wants no replicas")]


def _missing_node(p: Problem) -> tuple[list[dict], list[Symptom]]:
    ops = _recreated(p, "nodeSelector", {"kubernetes.io/hostname": p.fault.params["node"]})
    return ops, [_pods(p, p.target, r"\bPending\b", f"the pods of {p.target} cannot be scheduled")]


def _image(p: Problem) -> tuple[list[dict], list[Symptom]]:
    box, image = p.fault.params["container"], p.fault.params["value"]
    ops = [{"kubectl": kubectl("set", "image", f"deployment/{p.target}", f"{box}={image}", "-n", p.namespace)}]
    jsonpath = "jsonpath={.spec.template.spec.containers[*].image}"
    return ops, [Symptom(kubectl("get", "deployment", p.target, "-n", p.namespace, "-o", jsonpath), re.escape(image),
                         f"deployment {p.target} runs the buggy image {image}")]


def _command(p: Problem) -> tuple[list[dict], list[Symptom]]:
    value = list(p.fault.params["value"])
    binary = value[0].rsplit("/", 1)[-1]
    return _recreated(p, "command", value), [_logs(p, p.target, rf"cmd/{re.escape(binary)}/",
                                                   f"{p.target}'s pod runs the {binary} binary")]


def _mongo(p: Problem, pattern: str) -> tuple[list[dict], list[Symptom]]:
    e = p.fault.expect
    ops = [{"kubectl": kubectl("exec", f"deploy/{p.target}", "-n", p.namespace, "--", "/bin/bash", e["script"])}]
    ops += [{"kubectl": kubectl("delete", "pods", "-n", p.namespace, "-l", _selector(p.app, d))}
            for d in e["dependents"]]
    return ops, [_logs(p, d, pattern.format(db=re.escape(e["db"])), f"{d} cannot use {p.target}")
                 for d in e["dependents"]]


def tls_conf(p: Problem) -> str:
    """Return mongod.conf as the TLS injector writes it."""
    e = p.fault.expect
    conf = yaml.safe_load(_configmap(p.app, e["configmap"])["data"][e["key"]]) or {}
    conf.setdefault("net", {})["tls"] = {"mode": "requireTLS",
                                         "certificateKeyFile": p.fault.params["certificate_key_file"],
                                         "CAFile": p.fault.params["ca_file"]}
    return yaml.safe_dump(conf, sort_keys=False, default_flow_style=False)


def _mongo_tls(p: Problem) -> tuple[list[dict], list[Symptom]]:
    e, ns, folder = p.fault.expect, p.namespace, p.fault.params["certificate_key_file"].rsplit("/", 1)[0]
    box = t.main_container(p.app, p.target)["name"]
    mount = {"spec": {"template": {"spec": {"volumes": [{"name": "tls-cert", "secret": {"secretName": "mongodb-tls"}}],
                                            "containers": [{"name": box, "volumeMounts": [
                                                {"name": "tls-cert", "mountPath": folder, "readOnly": True}]}]}}}}
    ops = [{"kubectl": kubectl("patch", "deployment", p.target, "-n", ns, "-p", json.dumps(mount))},
           {"kubectl": kubectl("patch", "configmap", e["configmap"], "-n", ns, "--type", "merge", "-p",
                               json.dumps({"data": {e["key"]: tls_conf(p)}}))},
           {"kubectl": kubectl("rollout", "restart", f"deployment/{p.target}", "-n", ns)},
           {"kubectl": kubectl("rollout", "status", f"deployment/{p.target}", "-n", ns, "--timeout=120s")}]
    ops += [{"kubectl": kubectl("delete", "pods", "-n", ns, "-l", _selector(p.app, d))} for d in e["dependents"]]
    return ops, [Symptom(kubectl("get", "configmap", e["configmap"], "-n", ns, "-o", "yaml"), r"mode: requireTLS",
                         f"mongod.conf of {p.target} requires TLS")]


def flags_text(p: Problem, variant: str) -> str:
    """Return the flag file with the problem's flag set to a variant, as the flagd injector writes it."""
    e = p.fault.expect
    doc = json.loads(_configmap(p.app, e["configmap"])["data"][e["key"]])
    doc["flags"][p.target]["defaultVariant"] = variant
    return json.dumps(doc, indent=2)


def _flag(p: Problem) -> tuple[list[dict], list[Symptom]]:
    e, ns, variant = p.fault.expect, p.namespace, p.fault.params["variant"]
    ops = [{"kubectl": kubectl("patch", "configmap", e["configmap"], "-n", ns, "--type", "merge", "-p",
                               json.dumps({"data": {e["key"]: flags_text(p, variant)}}))},
           {"kubectl": kubectl("rollout", "restart", f"deployment/{e['deployment']}", "-n", ns)}]
    pattern = rf'"{re.escape(p.target)}":\s*\{{(?:[^{{}}]|\{{[^{{}}]*\}})*"defaultVariant":\s*"{re.escape(variant)}"'
    return ops, [Symptom(kubectl("get", "configmap", e["configmap"], "-n", ns, "-o", "yaml"), pattern,
                         f"feature flag {p.target} is switched to {variant!r}")]


def chaos_object(p: Problem) -> dict:
    """Return the Chaos Mesh object AIOpsLab's injector applies for a chaos problem (as aoi.faults.chaos does)."""
    params, kind = dict(p.fault.params), "PodChaos" if p.fault.mechanism == "pod_chaos" else "NetworkChaos"
    action = params["action"]
    selector = {"labelSelectors": dict(_service(p.app, p.target)["spec"]["selector"])}
    if action == "loss":
        selector = {"namespaces": [p.namespace], **selector}
    spec = {"action": action, "mode": "one", "duration": params.get("duration", "200s"), "selector": selector}
    if action == "container-kill":
        spec["containerNames"] = list(params["container_names"])
    elif action in ("loss", "delay"):
        correlation = str(params.get("correlation", "100"))
        spec[action] = ({"loss": str(params.get("loss", "99")), "correlation": correlation} if action == "loss" else
                        {"latency": params.get("latency", "10s"), "correlation": correlation,
                         "jitter": params.get("jitter", "0ms")})
    name = params.get("name") or CHAOS_NAMES[action]
    return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": kind,
            "metadata": {"name": name, "namespace": p.namespace}, "spec": spec}


def _chaos(p: Problem) -> tuple[list[dict], list[Symptom]]:
    body = chaos_object(p)
    kind, name = body["kind"], body["metadata"]["name"]
    ops = [{"api": {"verb": "create", "kind": kind, "namespace": p.namespace, "body": body}}]
    return ops, [Symptom(kubectl("get", kind.lower(), "-n", p.namespace), rf"(?m)^{re.escape(name)}\s",
                         f"the Chaos Mesh {kind} {name} is acting on {p.target}")]


RENDER = {"target_port": _target_port, "scale_zero": _scale_zero, "missing_node": _missing_node, "image": _image,
          "command": _command, "mongo_tls": _mongo_tls, "flagd_flag": _flag, "pod_chaos": _chaos,
          "network_chaos": _chaos,
          "mongo_revoke": lambda p: _mongo(p, r"not authorized on {db}"),
          "mongo_drop_user": lambda p: _mongo(p, r"Authentication failed")}
