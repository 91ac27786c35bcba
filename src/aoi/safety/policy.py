"""The command policy: which exec_shell commands the probe and the executor may run, decided without a shell."""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote

from aoi.protocols import SHELL_ROLES
from aoi.safety import baseline, filters, manifests, shellwords
from aoi.safety.kubeargs import Call, parse
from aoi.safety.resources import CLUSTER_SCOPED, IDENTITY, NAMESPACED, targets
from aoi.safety.shellwords import Refused

# Command paths (verb plus sub-command, aliases resolved) by what they do.
READS = {"get", "describe", "logs", "top pod", "top node", "events", "explain", "api-resources", "api-versions",
         "version", "cluster-info", "auth can-i", "auth whoami", "config view",
         "config current-context", "config get-contexts", "rollout status", "rollout history"}
WRITES = {"patch", "scale", "set image", "set env", "set resources", "rollout restart", "rollout undo",
          "rollout pause", "rollout resume", "delete", "create configmap", "create secret generic", "label",
          "annotate", "cordon", "uncordon"}
EXECS = {"exec"}
# Other commands that change the cluster: the probe hears "this is a write", the executor hears REFUSED's reason.
CHANGES = {"apply", "replace", "create", "edit", "run", "drain", "taint", "expose", "autoscale", "certificate", "set",
           "patch", "scale", "delete", "label", "annotate", "cordon", "uncordon", "auth reconcile"}
PATCH_LIKE = "change the live object with kubectl patch, set or scale instead"
REFUSED = {
    "apply": "kubectl apply needs a manifest — the executor may pipe one into kubectl apply -f - (e.g. kubectl get "
             f"cm X -o yaml | sed ... | kubectl apply -f -), or {PATCH_LIKE}",
    "replace": f"kubectl replace needs a manifest file, which exec_shell cannot provide — {PATCH_LIKE}",
    "create": "kubectl create is limited to ConfigMaps and generic Secrets from literals — patch the existing object "
              "instead",
    "edit": "kubectl edit opens an interactive editor — use kubectl patch with an inline -p patch instead",
    "run": "kubectl run starts a new workload with an arbitrary image — fix the existing workload with kubectl patch "
           "or set image instead",
    "debug": "kubectl debug starts containers with arbitrary images — read logs and describe the pod, or run one "
             "command with kubectl exec (executor only)",
    "attach": "kubectl attach is interactive — read the container's output with kubectl logs instead",
    "cp": "kubectl cp moves files between a container and the local disk — read a file with kubectl exec POD -- cat "
          "FILE (executor only) instead",
    "port-forward": "kubectl port-forward opens a long-running tunnel — read the Service and its endpoints, or have "
                    "the executor exec curl inside a pod",
    "proxy": "kubectl proxy opens a long-running, unauthenticated tunnel to the API — use kubectl get --raw PATH",
    "drain": "kubectl drain evicts every pod from a node — cordon the node and delete specific pods instead",
    "taint": "kubectl taint changes scheduling for every workload on a node — patch the workload's tolerations or "
             "node selector instead",
    "expose": f"kubectl expose creates new Services — {PATCH_LIKE}",
    "autoscale": f"kubectl autoscale creates new autoscalers — {PATCH_LIKE}",
    "diff": "kubectl diff sends manifest files to the server as a dry-run — compare with kubectl get -o yaml instead",
    "wait": "kubectl wait blocks until a condition holds — check once with kubectl get or kubectl rollout status",
    "kustomize": "kubectl kustomize reads local or remote files — read live objects with kubectl get instead",
    "plugin": "kubectl plugins run arbitrary local programs — use built-in kubectl commands instead",
    "certificate": "kubectl certificate approves or denies certificates, which mints or revokes credentials — report "
                   "it in your findings",
    "auth reconcile": "kubectl auth reconcile changes RBAC — report the permission problem in your findings",
    "config": "kubectl config changes the kubeconfig, but the environment already targets the right cluster and "
              "user — read it with kubectl config view",
    "set serviceaccount": "kubectl set serviceaccount changes a workload's permissions — report it instead",
    "set subject": "kubectl set subject changes RBAC bindings — report the permission problem in your findings",
    "create token": "kubectl create token mints a credential — report the permission problem instead",
}

# Cluster-scoped objects the executor may change (repairs such as freeing a PV's claimRef or cordoning a node).
CLUSTER_WRITES = {("patch", "persistentvolumes"), ("patch", "nodes"), ("label", "nodes"), ("annotate", "nodes"),
                  ("label", "persistentvolumes"), ("annotate", "persistentvolumes"), ("cordon", "nodes"),
                  ("uncordon", "nodes")}

# Flags refused for the probe and the executor on top of the baseline every role obeys (aoi.safety.baseline).
SPEC_FLAGS = {"overrides", "privileged", "image"}
ESCALATION = re.compile(r"privileged|hostPID|hostIPC|hostNetwork|hostPath|allowPrivilegeEscalation|capabilities|"
                        r"serviceAccount|automountServiceAccountToken", re.IGNORECASE)
APPLY_FLAGS = {"filename", "namespace", "dry-run", "output"}  # what the executor's kubectl apply -f - may add
RAW_FORBIDDEN = {"exec", "attach", "portforward", "proxy", "secrets", "token"}


class Verdict(NamedTuple):
    """The policy's answer: whether the command may run, why (one sentence), and its kind."""

    allowed: bool
    reason: str
    kind: str  # read | write | exec | refused


def check(command: str, role: str) -> Verdict:
    """Decide whether a role may run an exec_shell command, parsing it without a shell.

    Example:
        >>> check("kubectl get pods -n shop | grep -v Running", "probe").kind
        'read'
        >>> check("kubectl delete pod cart-1 -n shop", "probe").reason[:43]
        'kubectl delete is a write; the probe is rea'
    """
    if role not in SHELL_ROLES:
        raise ValueError(f"unknown role {role!r}; use 'probe' or 'executor'")
    return _judge(lambda: kubectl_call(command), role)


def check_args(args: list[str], role: str, stdin: bytes | None = None) -> Verdict:
    """Decide whether a role may run one kubectl invocation, given its arguments after the shell expanded them.

    exec_shell's shell calls this for every kubectl it runs, so the policy judges exactly the argv that runs; `stdin`
    is what its pipe feeds kubectl, which lets the executor `kubectl apply -f -` the objects it can see there.

    Example:
        >>> check_args(["get", "pods", "-n", "shop"], "probe").kind
        'read'
        >>> check_args(["delete", "pod", "x", "-n", "shop"], "probe").allowed
        False
    """
    if role not in SHELL_ROLES:
        raise ValueError(f"unknown role {role!r}; use 'probe' or 'executor'")
    return _judge(lambda: parse(list(args)), role, stdin)


def _judge(read_call, role: str, stdin: bytes | None = None) -> Verdict:
    """Parse the call (read_call may raise Refused) and judge it for the role."""
    try:
        call = read_call()
        if role == "executor" and call.path == "apply" and stdin is not None:
            _check_apply(call, stdin)
            return Verdict(True, ALLOWED["apply"], "write")
        kind = _kind(call, role)
        if call.problems:
            raise Refused(call.problems[0])
        _check_flags(call)
        {"read": _check_read, "write": _check_write, "exec": _check_exec}[kind](call)
    except Refused as refused:
        return Verdict(False, one_line(str(refused)), "refused")
    return Verdict(True, ALLOWED[kind].format(path=call.path), kind)


def one_line(text: str, limit: int = 400) -> str:
    """Collapse whitespace (a quoted token may hold newlines) and cap the length of a reason."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


ALLOWED = {"read": "kubectl {path} only reads, so it may run.",
           "apply": "kubectl apply -f - changes the objects piped into it, which the executor may change.",
           "write": "kubectl {path} is a write the executor may make, subject to approval.",
           "exec": "kubectl exec runs one non-interactive command in a container, subject to approval."}


def kubectl_call(command: str) -> Call:
    """Split a command, check its filters, and parse its kubectl stage; raise Refused otherwise."""
    stages = shellwords.split(command)
    if stages[0][0] != "kubectl":
        raise Refused(f"`{stages[0][0]}` is refused because exec_shell runs only kubectl — use kubectl (optionally "
                      "piped into grep, head, awk, jq ...) or ask the executor to kubectl exec it in a container.")
    for stage in stages[1:]:
        filters.check(stage)
    return parse(stages[0][1:])


def _kind(call: Call, role: str) -> str:
    """Classify the command path for a role, or raise Refused with what to do instead."""
    path = call.path
    if path in READS or (role == "executor" and path in WRITES | EXECS):
        return "read" if path in READS else "write" if path in WRITES else "exec"
    if role == "probe" and path in EXECS:
        raise Refused("kubectl exec runs commands inside a container, which the probe may not do — read the "
                      "container's logs or describe the pod, or ask the executor to run it.")
    if role == "probe" and (path in WRITES or path in CHANGES or call.verb in CHANGES):
        raise Refused(f"kubectl {path} is a write; the probe is read-only — describe what should change in your "
                      "findings so the executor can do it.")
    reason = REFUSED.get(path) or REFUSED.get(call.verb)
    if reason:
        raise Refused(f"{reason}.")
    raise Refused(f"kubectl {path or '(no command)'} is not a command AOI allows — read with get, describe, logs or "
                  "events, and change things (executor) with patch, set, scale or rollout.")


def _check_flags(call: Call) -> None:
    """Apply the baseline every role obeys, then refuse injected specs, other subresources and stray `--`."""
    baseline.check(call)
    if call.values("filename"):
        raise Refused("-f/--filename reads manifests, which exec_shell cannot provide — name objects as TYPE NAME and "
                      "pass patches inline.")
    for name in SPEC_FLAGS:
        if call.values(name):
            raise Refused(f"The flag --{name} is refused because it injects an arbitrary pod spec or image — patch "
                          "the owning workload instead.")
    if any(value not in ("status", "scale") for value in call.values("subresource")):
        raise Refused("Only the status and scale subresources may be named — read the object itself otherwise.")
    if call.command is not None and call.path not in EXECS:
        raise Refused(f"`--` separates a container command in kubectl exec only — remove it from kubectl "
                      f"{call.path}.")


def _check_read(call: Call) -> None:
    """Refuse reads that leak credentials: Secrets, the raw kubeconfig, and risky raw API paths."""
    if call.verb in ("get", "describe") and any(res == "secrets" for res, _ in targets(call)):
        raise Refused("Reading Secrets is refused because it leaks credentials — describe the workload to see which "
                      "Secret keys it references instead.")
    for path in call.values("raw"):
        if call.path == "get":
            _check_raw_path(path or "")


def _check_raw_path(path: str) -> None:
    """Refuse raw API paths that open streams, reach through proxies, or read secrets and tokens."""
    decoded = unquote(unquote(path)).lower()
    route, _, query = decoded.partition("?")
    if not decoded.startswith("/") or ".." in decoded or RAW_FORBIDDEN & set(route.split("/")) \
            or "watch" in query or "follow" in query:
        raise Refused(f"kubectl get --raw {path} is refused (only plain reads of API paths, never exec, attach, "
                      "portforward, proxy, secrets, tokens or streams) — use kubectl get or logs instead.")


def _check_write(call: Call) -> None:
    """Refuse writes across namespaces, to identities, to cluster-scoped objects, or that escalate privileges."""
    if call.on("all-namespaces") or call.values("raw"):
        raise Refused(f"kubectl {call.path} with --all-namespaces or --raw is refused — name one namespace with -n "
                      "and the objects to change.")
    found = targets(call)
    if not found:
        raise Refused(f"kubectl {call.path} names no object — give TYPE NAME (or TYPE/NAME) explicitly.")
    for res, _ in found:
        _check_target(call.path, res)
    for value in call.values("patch") + call.operands:
        if ESCALATION.search(value or ""):
            raise Refused("Patches that touch privileges, host namespaces, host paths or service accounts are "
                          "refused — change only images, commands, ports, replicas, selectors, env or data.")
    if any((value or "").startswith("secret") for value in call.values("from")):
        raise Refused("Copying a Secret into environment variables exposes it — reference it with secretKeyRef in "
                      "a patch instead.")


def _check_target(path: str, res: str) -> None:
    """Refuse one target resource of a write."""
    verb = path.split(" ")[0]
    if res in IDENTITY:
        raise Refused(f"Changing {res} is refused because it changes permissions — report the permission problem "
                      "in your findings instead.")
    if res in CLUSTER_SCOPED and (verb, res) not in CLUSTER_WRITES:
        action = "Deleting" if verb == "delete" else "Changing"
        raise Refused(f"{action} cluster-scoped {res} is refused — change the namespaced workloads that use them "
                      "instead.")
    if res == "all":
        raise Refused(f"kubectl {path} on `all` touches every workload type at once — name a specific type such as "
                      "deployment or pod, and the objects.")
    if res not in NAMESPACED | CLUSTER_SCOPED:
        raise Refused(f"kubectl {path} on {res or 'an unnamed type'} is refused because AOI does not know whether "
                      "that resource is namespaced — name a specific type such as deployment, pod or configmap.")


def _check_apply(call: Call, stdin: bytes) -> None:
    """Let the executor apply what its pipe feeds kubectl: objects it may change, no privileges, few flags."""
    baseline.check(call)
    if call.problems:
        raise Refused(call.problems[0])
    if call.values("filename") != ["-"] or call.operands or call.command is not None:
        raise Refused("The executor may apply only objects piped in: kubectl apply -f - (e.g. kubectl get cm X -n NS "
                      "-o yaml | sed ... | kubectl apply -f -).")
    extra = sorted({name for name, _ in call.flags} - APPLY_FLAGS)
    if extra:
        raise Refused(f"The flag --{extra[0]} is refused with kubectl apply — use only -f -, -n, --dry-run and -o.")
    for res in manifests.resources(stdin):
        _check_target("apply", res)
    if ESCALATION.search(stdin.decode(errors="replace")):
        raise Refused("Manifests that mention privileges, host namespaces, host paths or service accounts are refused "
                      "— change ConfigMaps and Services this way, workloads with kubectl patch, set or scale.")


def _check_exec(call: Call) -> None:
    """Refuse interactive or malformed exec; allow one command in one pod."""
    if call.on("stdin") or call.on("tty"):
        raise Refused("Interactive kubectl exec (-i, -t, --stdin, --tty) is refused — run one command: kubectl "
                      "exec POD -- CMD ARGS.")
    if len(call.operands) != 1 or not call.command:
        raise Refused("kubectl exec needs exactly one pod and a command after `--` — write kubectl exec POD [-c "
                      "CONTAINER] -- CMD ARGS.")
    _check_target("exec", targets(call)[0][0])
