"""What a scenario may touch: its app's namespace through kubectl and the API, nothing cluster-wide, no host.

`scope_errors` reads every command line and manifest of a scenario (fault, symptoms, diagnostics, solution) and
returns one reason per thing outside that scope: another namespace, a cluster-scoped write, host access (hostPath,
hostNetwork, hostPID, hostIPC, privileged), a program other than kubectl (ssh, docker, curl to outside, ...), or
credentials of its own. Text filters after a pipe (grep, head, ...) are allowed: they only read kubectl's output.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator

import yaml

FILTERS = frozenset({"grep", "egrep", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "awk", "jq"})
CONTROL = frozenset({"|", "||", "&&", ";", "&"})
WRITES = frozenset({"create", "apply", "delete", "patch", "replace", "edit", "label", "annotate", "scale", "set",
                    "rollout", "taint", "cordon", "uncordon", "drain", "expose", "autoscale", "run", "cp"})
UNSCOPED = frozenset({"version", "api-resources", "api-versions", "cluster-info", "explain", "auth", "config"})
HOST_VERBS = {"cp": "copies files between the host and a container", "proxy": "opens a port on the host",
              "port-forward": "opens a port on the host", "attach": "attaches the host's terminal to a container"}
NODE_VERBS = frozenset({"taint", "cordon", "uncordon", "drain"})
CLUSTER_RESOURCES = frozenset({
    "node", "nodes", "no", "namespace", "namespaces", "ns", "persistentvolume", "persistentvolumes", "pv",
    "clusterrole", "clusterroles", "clusterrolebinding", "clusterrolebindings", "storageclass", "storageclasses",
    "sc", "customresourcedefinition", "customresourcedefinitions", "crd", "crds", "priorityclass",
    "priorityclasses", "mutatingwebhookconfigurations", "validatingwebhookconfigurations", "apiservices",
    "certificatesigningrequests", "csr", "runtimeclasses", "volumeattachments"})
CLUSTER_KINDS = frozenset({
    "Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding", "StorageClass",
    "CustomResourceDefinition", "PriorityClass", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
    "APIService", "CertificateSigningRequest", "RuntimeClass", "VolumeAttachment"})
CREDENTIAL_FLAGS = ("--kubeconfig", "--context", "--cluster", "--server", "-s", "--token", "--as", "--as-group",
                    "--user", "--certificate-authority", "--client-key", "--client-certificate")
HOST_FIELDS = ("hostPath", "hostNetwork", "hostPID", "hostIPC", "privileged")
HOST_TEXT = re.compile(r'"?(hostPath)"?\s*:|"?(hostNetwork|hostPID|hostIPC|privileged)"?\s*:\s*true')
OUTSIDE = frozenset({"ssh", "scp", "docker", "nsenter", "chroot", "mount", "crictl", "ctr", "systemctl"})
URL_HOST = re.compile(r"(?:https?|ftp)://([^/:\s'\"]+)")


def scope_errors(scenario) -> list[str]:
    """Return one reason per thing the scenario reaches outside its app's namespace (empty: in scope).

    Example:
        >>> from aoi.problems.seeds import seed_scenarios
        >>> scope_errors(seed_scenarios()[0])
        []
    """
    ns, errors = scenario.namespace, []
    for i, op in enumerate(scenario.fault):
        if "kubectl" in op:
            errors += command_errors(op["kubectl"], ns, f"fault/{i}")
            errors += manifest_errors(op.get("stdin") or "", ns, f"fault/{i}/stdin")
        else:
            errors += api_errors(op["api"], ns, f"fault/{i}/api")
    lines = [(f"symptoms/{i}/command", s.command) for i, s in enumerate(scenario.symptoms)]
    lines += [(f"diagnostic_commands/{i}", c) for i, c in enumerate(scenario.diagnostic_commands)]
    lines += [(f"solution_commands/{i}", c) for i, c in enumerate(scenario.solution_commands)]
    for where, line in lines:
        errors += command_errors(line, ns, where)
    return errors


def command_errors(line: str, ns: str, where: str) -> list[str]:
    """Return the reasons one command line leaves the namespace (each pipeline segment is read).

    Example:
        >>> command_errors("kubectl get pods -n other", "shop", "x")
        ["x: touches namespace 'other' (the scenario's namespace is 'shop'); use -n shop"]
    """
    try:
        segments = _segments(line)
    except ValueError as exc:
        return [f"{where}: cannot be parsed as a command line ({exc}); fix its quotes"]
    errors = [f"{where}: {reason}" for reason in _host_text(line)]
    for n, words in enumerate(segments):
        if words and words[0] == "kubectl":
            errors += [f"{where}: {reason}" for reason in _kubectl_errors(words, ns)]
        elif words and (n == 0 or words[0] not in FILTERS):
            errors.append(f"{where}: runs {words[0]!r}, not kubectl; a scenario reaches the cluster only through "
                          "kubectl (text filters may follow a pipe)")
    return errors


def _segments(line: str) -> list[list[str]]:
    """Split a command line into its pipeline/list segments of words (ValueError on unbalanced quotes)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;<>")
    lexer.whitespace_split = True
    segments: list[list[str]] = [[]]
    for word in lexer:
        if word in CONTROL:
            segments.append([])
        elif word[0] in "<>":
            segments[-1].append(">")  # a redirection: reported by _kubectl_errors or as a program
        else:
            segments[-1].append(word)
    return [s for s in segments if s]


def _kubectl_errors(words: list[str], ns: str) -> Iterator[str]:
    """Yield the reasons one kubectl invocation leaves the namespace."""
    inner = words[words.index("--") + 1:] if "--" in words else []
    words = words[:words.index("--")] if "--" in words else words
    flags, args = _flags(words[1:])
    for flag in CREDENTIAL_FLAGS:
        if flag in flags:
            yield f"sets {flag}: a scenario runs with the credentials it is given, never its own"
    if ">" in args:
        yield "redirects output to a file on the host; print to stdout instead"
    every = "-A" in flags or "--all-namespaces" in flags
    if every:
        yield f"reads every namespace (-A); use -n {ns}"
    namespace = flags.get("-n") or flags.get("--namespace")
    if namespace and namespace != ns:
        yield f"touches namespace {namespace!r} (the scenario's namespace is {ns!r}); use -n {ns}"
    verb, resources = (args[0] if args else ""), _resources(args[1:])
    cluster = sorted(r for r in resources if r in CLUSTER_RESOURCES)
    cluster_only = bool(resources) and resources <= CLUSTER_RESOURCES
    if not (namespace or every or cluster_only) and verb not in UNSCOPED | NODE_VERBS:
        yield f"has no -n: kubectl would act in the kubeconfig's namespace, not the app's; add -n {ns}"
    if verb in HOST_VERBS or (verb == "debug" and any(a.startswith(("node/", "nodes/")) for a in args[1:])):
        yield f"{HOST_VERBS.get(verb, 'debugs a node from the host')} ({verb}): scenarios stay inside the cluster API"
    if verb in NODE_VERBS or (verb in WRITES and cluster):
        yield f"writes cluster-scoped {', '.join(cluster) or 'nodes'} ({verb}); change only objects in {ns}"
    yield from _inner_errors(inner)


def _flags(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """Return (flag -> value, positional words) of kubectl's arguments (-n x, --namespace=x, -nx all read)."""
    flags, args, i = {}, [], 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and "=" in word:
            key, value = word.split("=", 1)
            flags[key] = value
        elif word in ("-n", "--namespace", *CREDENTIAL_FLAGS) and i + 1 < len(words):
            flags[word], i = words[i + 1], i + 1
        elif word.startswith("-n") and len(word) > 2 and not word.startswith("--"):
            flags["-n"] = word[2:]
        elif word.startswith("-"):
            flags[word] = ""
        else:
            args.append(word)
        i += 1
    return flags, args


def _resources(args: list[str]) -> set[str]:
    """Return the resource names kubectl's positional words name (deployment/x, pods,nodes, ns x)."""
    found = set()
    for arg in args[:1]:
        for part in arg.split(","):
            found.add(part.split("/", 1)[0].split(".", 1)[0].lower())
    return found


def _inner_errors(argv: list[str]) -> Iterator[str]:
    """Yield the reasons a command run in a container (kubectl exec ... -- argv) reaches the host or outside."""
    text = " ".join(argv)
    for word in text.split():  # `sh -c "ssh host"` hides the program inside one argument
        if word.rsplit("/", 1)[-1] in OUTSIDE:
            yield f"runs {word!r} inside a container: host and outside access is out of scope"
    for host in URL_HOST.findall(text):
        if "." in host and not (host.endswith(".svc") or ".svc." in host):
            yield f"reaches {host!r} outside the cluster; call the app's services by their Service names"


def _host_text(text: str) -> list[str]:
    """Return a reason per host-access field written in a command line or manifest text."""
    return [f"asks for host access ({a or b}); scenarios stay inside containers" for a, b in HOST_TEXT.findall(text)]


def manifest_errors(text: str, ns: str, where: str) -> list[str]:
    """Return the reasons the manifests piped to kubectl (YAML or JSON) leave the namespace."""
    if not text.strip():
        return []
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        return [f"{where}: not valid YAML ({' '.join(str(exc).split())[:120]}); fix the manifest"]
    return [f"{where}: {reason}" for doc in docs for reason in _object_errors(doc, ns)]


def api_errors(api: dict, ns: str, where: str) -> list[str]:
    """Return the reasons one API operation leaves the namespace."""
    errors = []
    if api.get("namespace", ns) != ns:
        errors.append(f"{where}: touches namespace {api['namespace']!r}; use namespace {ns!r}")
    for key in ("body", "patch"):
        if api.get(key) is not None:
            errors += [f"{where}/{key}: {reason}" for reason in _object_errors(api[key], ns)]
    return errors


def _object_errors(doc, ns: str) -> list[str]:
    """Return the reasons one object (or patch) leaves the namespace or asks for host access."""
    errors = _host_text(json.dumps(doc)) if not isinstance(doc, str) else _host_text(doc)
    if isinstance(doc, dict):
        if doc.get("kind") in CLUSTER_KINDS:
            errors.append(f"writes a cluster-scoped {doc['kind']}; change only objects in {ns}")
        meta_ns = (doc.get("metadata") or {}).get("namespace") if isinstance(doc.get("metadata"), dict) else None
        if meta_ns not in (None, ns):
            errors.append(f"names namespace {meta_ns!r} in its metadata; use {ns!r}")
    return errors
