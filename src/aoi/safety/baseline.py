"""The rules every role obeys, admin (AIOpsLab parity) included: kubectl keeps its identity, cluster and config, never
touches host files, and never waits on a terminal or a stream."""

from __future__ import annotations

from aoi.safety.kubeargs import Call
from aoi.safety.shellwords import Refused

# kubectl 1.32's built-in commands; any other first word would run a kubectl-NAME plugin from the host's PATH.
VERBS = {"create", "expose", "run", "set", "explain", "get", "edit", "delete", "rollout", "scale", "autoscale",
         "certificate", "cluster-info", "top", "cordon", "uncordon", "drain", "taint", "describe", "logs", "attach",
         "exec", "port-forward", "proxy", "cp", "auth", "debug", "events", "diff", "apply", "patch", "replace", "wait",
         "kustomize", "label", "annotate", "completion", "alpha", "api-resources", "api-versions", "config", "plugin",
         "version", "options", "help"}
CONFIG_READS = {"config view", "config current-context", "config get-contexts"}
# Commands refused for every role: they open an editor or a terminal, tunnel, copy host files, or mint credentials.
INTERACTIVE = "it waits on a terminal or runs until interrupted"
EVERYONE_REFUSED = {
    "edit": "kubectl edit opens an interactive editor — use kubectl patch with an inline -p patch instead",
    "apply edit-last-applied": "it opens an interactive editor — use kubectl patch with an inline -p patch instead",
    "attach": f"kubectl attach is refused because {INTERACTIVE} — read the container's output with kubectl logs",
    "port-forward": f"kubectl port-forward is refused because {INTERACTIVE} — read the Service and its endpoints",
    "proxy": f"kubectl proxy is refused because {INTERACTIVE} — read API paths with kubectl get --raw PATH",
    "debug": "kubectl debug starts interactive containers with arbitrary images — describe the pod or exec one command",
    "cp": "kubectl cp reads and writes host files — read a container file with kubectl exec POD -- cat FILE",
    "plugin": "kubectl plugins run programs from the host — use built-in kubectl commands",
    "kustomize": "kubectl kustomize reads host folders — read live objects with kubectl get",
    "diff": "kubectl diff reads manifest files from the host — compare with kubectl get -o yaml",
    "alpha": "kubectl alpha commands are experimental — use the stable built-in commands",
    "cluster-info dump": "kubectl cluster-info dump copies the whole cluster (or writes host files) — read the objects "
                         "you need with kubectl get and logs",
    "create token": "kubectl create token mints a credential — report the permission problem instead",
}
# Flags refused for every role, grouped by what they would let a command do.
FLAG_REASONS = {
    "identity": ({"as", "as-group", "as-uid", "token", "user", "username", "password", "client-certificate",
                  "client-key"},
                 "changes who kubectl acts as — run the command with your own role's credentials"),
    "target": ({"kubeconfig", "context", "cluster", "server", "certificate-authority", "tls-server-name",
                "insecure-skip-tls-verify", "insecure-skip-tls-verify-backend"},
               "points kubectl at other credentials or another cluster — drop it; the environment already targets "
               "the right cluster"),
    "files": ({"kustomize", "patch-file", "from-file", "from-env-file", "cache-dir", "profile", "profile-output",
               "output-directory"},
              "reads or writes host files, which exec_shell never offers — name objects as TYPE NAME and pass "
              "patches and values inline"),
    "stream": ({"follow", "watch", "watch-only"},
               "streams until interrupted — run the command once without it (bound logs with --tail or --since)"),
}
MAX_VERBOSITY = 5  # from -v=6 kubectl logs the kubeconfig path and every request URL; from 8, headers and bodies


def check(call: Call) -> None:
    """Raise Refused if a parsed kubectl call breaks a rule that binds every role.

    Example:
        >>> from aoi.safety.kubeargs import parse
        >>> check(parse(["get", "pods", "-n", "shop"]))
        >>> check(parse(["-n", "shop", "edit", "deploy", "x"]))  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        aoi.safety.shellwords.Refused: kubectl edit opens an interactive editor — use kubectl patch with an inline -p
        patch instead.
    """
    if call.verb not in VERBS:
        raise Refused(f"kubectl {call.verb or '(no command)'} is not a built-in kubectl command (it would run a plugin "
                      "from the host) — use get, describe, logs, events, or patch, set, scale and rollout.")
    reason = EVERYONE_REFUSED.get(call.path) or EVERYONE_REFUSED.get(call.verb)
    if reason:
        raise Refused(f"{reason}.")
    if call.verb == "config" and call.path not in CONFIG_READS:
        raise Refused(f"kubectl {call.path} is refused because the environment's kubeconfig is fixed — read it with "
                      "kubectl config view (without --raw).")
    _check_flags(call)
    _check_interactive(call)


def _check_flags(call: Call) -> None:
    """Refuse flags that change identity or cluster, touch host files, or stream forever."""
    for group, (names, why) in FLAG_REASONS.items():
        for name in names:
            if call.values(name) and (group != "stream" or call.on(name)):
                raise Refused(f"The flag --{name} is refused because it {why}.")
    if any(value != "-" for value in call.values("filename")):
        raise Refused("-f/--filename reads host files or URLs, which exec_shell never offers — name objects as TYPE "
                      "NAME, or change them with kubectl patch, set or scale.")
    for value in call.values("v"):
        if not (value or "").isdigit() or int(value) > MAX_VERBOSITY:
            raise Refused(f"Verbosity -v={value} is refused (from 6 kubectl prints its config path and requests) — "
                          f"use -v={MAX_VERBOSITY} or less.")
    for value in call.values("output"):
        if "file" in (value or "").split("=")[0].lower():  # go-template-file, templatefile, jsonpath-file, ...
            raise Refused(f"-o {value} reads a host template file — pass the template inline, e.g. "
                          "-o jsonpath='{...}'.")
    if call.path == "config view" and (call.values("raw") or call.values("flatten")):
        raise Refused("kubectl config view --raw or --flatten prints credentials — run kubectl config view without "
                      "them (it redacts secrets).")


def _check_interactive(call: Call) -> None:
    """Refuse commands that would wait for a terminal: run or exec attached without a one-shot command."""
    attached = call.on("stdin") or call.on("tty") or call.on("attach")
    if call.verb == "run" and attached:
        raise Refused("kubectl run -i/-t/--attach is refused because it waits on a terminal — run without them and "
                      "read the pod's logs.")
    if call.verb == "exec" and not call.command:
        raise Refused("kubectl exec needs a command after `--` — write kubectl exec POD [-c CONTAINER] -- CMD ARGS.")
