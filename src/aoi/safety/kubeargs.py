"""Read kubectl's argv as kubectl's flag parser does: global flags, the command path, operands and resources."""

from __future__ import annotations

from dataclasses import dataclass, field

from aoi.safety.shellwords import Refused

# Sub-commands kubectl finds after a verb (cobra's command tree); aliases map to the canonical name.
SUBCOMMANDS = {
    "rollout": {"history", "pause", "restart", "resume", "status", "undo"},
    "set": {"env", "image", "resources", "selector", "serviceaccount", "sa", "subject"},
    "create": {"clusterrole", "clusterrolebinding", "configmap", "cm", "cronjob", "cj", "deployment", "deploy",
               "ingress", "ing", "job", "namespace", "ns", "poddisruptionbudget", "pdb", "priorityclass", "pc",
               "quota", "resourcequota", "role", "rolebinding", "secret", "service", "svc", "serviceaccount", "sa",
               "token"},
    "create secret": {"docker-registry", "generic", "tls"},
    "create service": {"clusterip", "externalname", "loadbalancer", "nodeport"},
    "config": {"current-context", "delete-cluster", "delete-context", "delete-user", "get-clusters", "get-contexts",
               "get-users", "rename-context", "set", "set-cluster", "set-context", "set-credentials", "unset",
               "use-context", "use", "view"},
    "auth": {"can-i", "reconcile", "whoami"},
    "top": {"node", "nodes", "no", "pod", "pods", "po"},
    "cluster-info": {"dump"},
    "certificate": {"approve", "deny"},
    "plugin": {"list"},
    "apply": {"edit-last-applied", "set-last-applied", "view-last-applied"},
}
PATH_ALIASES = {"top nodes": "top node", "top no": "top node", "top pods": "top pod", "top po": "top pod",
                "create cm": "create configmap", "set sa": "set serviceaccount", "create svc": "create service",
                "create ns": "create namespace", "create sa": "create serviceaccount",
                "config use": "config use-context",
                "create deploy": "create deployment", "create cj": "create cronjob", "create ing": "create ingress",
                "create pdb": "create poddisruptionbudget", "create pc": "create priorityclass",
                "create quota": "create resourcequota", "clusterinfo": "cluster-info"}

# Every flag AOI understands and whether it takes a value: "value" (next token or =), "bool" (=true|false only),
# "opt" (a value only after =). Any other flag is refused: guessing its arity could misread the command.
VALUE = ["namespace", "server", "v", "request-timeout", "filename", "kustomize", "label-columns", "output", "selector",
         "field-selector", "sort-by", "template", "chunk-size", "container", "containers", "patch", "patch-file",
         "type", "env", "from", "keys", "limits", "requests", "since", "since-time", "tail", "limit-bytes",
         "max-log-requests", "pod-running-timeout", "for", "types", "api-version", "api-group", "verbs", "categories",
         "subresource", "revision", "timeout", "field-manager", "replicas", "current-replicas", "resource-version",
         "to-revision", "grace-period", "from-literal", "from-file", "from-env-file", "output-directory", "namespaces",
         "image", "overrides", "raw", "as", "as-group", "as-uid", "token", "kubeconfig", "context", "cluster", "user",
         "username", "password", "certificate-authority", "client-certificate", "client-key", "tls-server-name",
         "cache-dir", "profile", "profile-output", "port", "address", "target", "copy-to", "prefix", "restart"]
BOOL = ["all-namespaces", "watch", "watch-only", "recursive", "ignore-not-found", "no-headers", "show-kind",
        "show-labels", "show-managed-fields", "server-print", "all-containers", "all-pods", "follow", "previous",
        "timestamps", "ignore-errors", "insecure-skip-tls-verify-backend", "insecure-skip-tls-verify", "show-events",
        "sum", "use-protocol-buffers", "show-capacity", "cached", "namespaced", "client", "list", "quiet", "flatten",
        "merge", "minify", "force", "now", "wait", "all", "overwrite", "local", "resolve", "stdin", "tty", "help",
        "append-hash", "save-config", "record", "allow-missing-template-keys", "disable-compression",
        "match-server-version", "warnings-as-errors", "interactive", "output-watch-events", "server-side",
        "force-conflicts", "privileged"]
FLAGS = {**dict.fromkeys(VALUE, "value"), **dict.fromkeys(BOOL, "bool"),
         "dry-run": "opt", "cascade": "opt", "validate": "opt"}
VERB_FLAGS = {"logs": {"prefix": "bool"}, "top": {"containers": "bool"}, "config": {"raw": "bool"}}
SHORT = {"n": "namespace", "s": "server", "v": "v", "h": "help", "A": "all-namespaces", "f": "filename",
         "k": "kustomize", "L": "label-columns", "o": "output", "R": "recursive", "l": "selector", "w": "watch",
         "c": "container", "i": "stdin", "t": "tty", "q": "quiet", "p": "patch", "e": "env"}
VERB_SHORT = {"logs": {"f": "follow", "p": "previous"}, "set": {"c": "containers"}, "delete": {"i": "interactive"}}
GLOBAL = {"namespace", "server", "v", "request-timeout", "as", "as-group", "as-uid", "token", "kubeconfig", "context",
          "cluster", "user", "username", "password", "certificate-authority", "client-certificate", "client-key",
          "tls-server-name", "cache-dir", "profile", "profile-output", "insecure-skip-tls-verify",
          "disable-compression", "match-server-version", "warnings-as-errors", "help"}


@dataclass
class Call:
    """One kubectl invocation: the command path, operands, flags in order, and the argv after `--`."""

    path: str = ""
    operands: list[str] = field(default_factory=list)
    flags: list[tuple[str, str | None]] = field(default_factory=list)
    command: list[str] | None = None
    problems: list[str] = field(default_factory=list)  # reasons to refuse, found once the command path was known

    @property
    def verb(self) -> str:
        """Return the first word of the command path."""
        return self.path.split(" ")[0]

    def values(self, name: str) -> list[str | None]:
        """Return every value given for a flag (None for a bare boolean)."""
        return [value for flag, value in self.flags if flag == name]

    def on(self, name: str) -> bool:
        """Return whether a boolean flag is set (bare, or =true/=1)."""
        return any(v is None or v.lower() in ("true", "1", "t") for v in self.values(name))

    @property
    def namespace(self) -> str | None:
        """Return the namespace named with -n/--namespace (the last one wins, as in kubectl)."""
        found = self.values("namespace")
        return found[-1] if found else None


def arity(name: str, verb: str) -> str | None:
    """Return how a long flag takes its value under a verb ("value", "bool" or "opt"); None if AOI does not know it."""
    return VERB_FLAGS.get(verb, {}).get(name) or FLAGS.get(name)


def _unknown(name: str) -> str:
    return (f"The flag {name} is not one AOI knows, so the command is refused — drop it or use a documented kubectl "
            "flag.")


def parse(argv: list[str]) -> Call:
    """Parse kubectl's arguments (without `kubectl`); raise Refused for flags AOI cannot read safely.

    Example:
        >>> call = parse(["-n", "shop", "rollout", "restart", "deploy/cart"])
        >>> call.path, call.operands, call.namespace
        ('rollout restart', ['deploy/cart'], 'shop')
    """
    call, i, complete, early = Call(), 0, False, None
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            call.command = argv[i + 1:]
            break
        if arg.startswith("-") and arg != "-":
            early = call.path if early is None and not complete and call.path else early
            i += _flag(call, argv, i, complete)
            continue
        if complete or not _extend(call, arg):
            complete = True
            call.operands.append(arg)
        else:
            complete = call.path not in SUBCOMMANDS
        i += 1
    if early is not None and call.path == early:  # no sub-command followed: `apply -f - ...` is plain apply
        call.problems = [p for p in call.problems if not p.endswith(EARLY)]
    return call


EARLY = "where kubectl may read it differently — put it after the full command."


def _extend(call: Call, word: str) -> bool:
    """Add a word to the command path if kubectl would read it as a (sub)command; return whether it did."""
    if not call.path:
        call.path = PATH_ALIASES.get(word, word)
        return True
    if word not in SUBCOMMANDS.get(call.path, ()):
        return False
    joined = f"{call.path} {word}"
    call.path = PATH_ALIASES.get(joined, joined)
    return True


def _flag(call: Call, argv: list[str], i: int, complete: bool) -> int:
    """Record the flag(s) at argv[i]; return how many tokens they used.

    Before the command path is known, only global flags are accepted (anything else could change which command
    kubectl finds). After it, an unknown flag is noted as a problem and read as a boolean: the verdict is a refusal
    either way, and the verb's own reason comes first.
    """
    arg, verb = argv[i], call.verb
    if arg.startswith("--"):
        name, eq, value = arg[2:].partition("=")
        if arity(name, verb) is None and not complete:
            raise Refused(_unknown(arg))
        if arity(name, verb) is None:
            call.problems.append(_unknown(f"--{name}"))
        takes = arity(name, verb) == "value" and not eq
        found, used = [(name, _next(argv, i, name) if takes else (value if eq else None))], 2 if takes else 1
    else:
        found, used = _short(arg, argv, i, verb)
    for name, value in found:
        if not complete and name not in GLOBAL:
            call.problems.append(f"The flag {arg} comes before the sub-command, {EARLY}")
        call.flags.append((name, value))
    return used


def _short(arg: str, argv: list[str], i: int, verb: str) -> tuple[list[tuple[str, str | None]], int]:
    """Expand a cluster of short flags (-it, -nshop, -o=json, -v6) as pflag does."""
    found: list[tuple[str, str | None]] = []
    for j, letter in enumerate(arg[1:], 1):
        name = VERB_SHORT.get(verb, {}).get(letter) or SHORT.get(letter)
        if name is None:
            raise Refused(_unknown(f"-{letter}"))
        rest = arg[j + 1:]
        if rest.startswith("="):
            return found + [(name, rest[1:])], 1
        if arity(name, verb) == "value":
            return (found + [(name, rest)], 1) if rest else (found + [(name, _next(argv, i, name))], 2)
        found.append((name, None))
    return found, 1


def _next(argv: list[str], i: int, name: str) -> str:
    """Return the value token after a flag, or refuse when there is none."""
    if i + 1 >= len(argv):
        raise Refused(f"The flag --{name} is missing its value — give it one.")
    return argv[i + 1]
