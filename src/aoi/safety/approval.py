"""The executor's approval gate: declarative rules first (first match wins), then the mode: auto, ask or deny."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import NamedTuple, TextIO

import yaml

from aoi.safety.policy import kubectl_call
from aoi.safety.resources import CLUSTER_SCOPED, resource, targets
from aoi.safety.shellwords import Refused

MODES = ("auto", "ask", "deny")
FIELDS = ("verbs", "resources", "namespaces", "names")  # what a rule may match on; each a list of glob patterns
PREVIEW_LIMIT = 2000


class RuleError(ValueError):
    """An approval rule that cannot be read; the message names the rule and the field."""


class Decision(NamedTuple):
    """The gate's answer for one change."""

    status: str  # approved | denied
    reason: str


class Fact(NamedTuple):
    """One object a command touches, as rules see it."""

    verbs: tuple[str, ...]  # the verb and the full command path, e.g. ("rollout", "rollout restart")
    resource: str
    namespace: str | None  # None for cluster-scoped objects
    name: str | None


@dataclass(frozen=True)
class Rule:
    """Allow or deny the commands whose verbs, resources, namespaces and names all match (empty = any)."""

    effect: str
    verbs: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    reason: str = ""

    def matches(self, fact: Fact) -> bool:
        """Return whether one touched object matches every field the rule sets."""
        checks = ((self.verbs, fact.verbs), (self.resources, (fact.resource,)),
                  (self.namespaces, (fact.namespace,) if fact.namespace else ()), (self.names, (fact.name or "",)))
        return all(not pats or any(fnmatchcase(v, p) for p in pats for v in values) for pats, values in checks)

    def applies(self, facts: list[Fact]) -> bool:
        """Deny rules apply when any touched object matches; allow rules only when all of them do."""
        return (any if self.effect == "deny" else all)(self.matches(f) for f in facts)


def rule(data: dict, index: int = 0) -> Rule:
    """Build a Rule from its dict form, or raise RuleError naming the rule and field.

    Example:
        >>> rule({"deny": {"verbs": ["delete"], "resources": ["pv"]}, "reason": "no PV deletes"}).resources
        ('persistentvolumes',)
    """
    if not isinstance(data, dict):
        raise RuleError(f"rule {index}: expected a mapping such as {{deny: {{verbs: [delete]}}}}, got {data!r}")
    effects = [key for key in ("allow", "deny") if key in data]
    extra = set(data) - {"allow", "deny", "reason"}
    if len(effects) != 1 or extra:
        raise RuleError(f"rule {index}: needs exactly one of 'allow' or 'deny' (plus an optional 'reason'); "
                        f"found keys {sorted(data)}")
    match = data[effects[0]] or {}
    if not isinstance(match, dict) or set(match) - set(FIELDS):
        raise RuleError(f"rule {index}: '{effects[0]}' must map some of {', '.join(FIELDS)} to lists; got {match!r}")
    fields = {key: _patterns(index, f"{effects[0]}.{key}", value) for key, value in match.items()}
    fields["resources"] = tuple(resource(r) for r in fields.get("resources", ()))
    if not isinstance(data.get("reason", ""), str):
        raise RuleError(f"rule {index}: 'reason' must be a string; got {data['reason']!r}")
    return Rule(effects[0], reason=data.get("reason", ""), **fields)


def _patterns(index: int, where: str, value) -> tuple[str, ...]:
    """Validate one match field: a list of non-empty strings."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RuleError(f"rule {index}: '{where}' must be a list of non-empty strings, e.g. [delete]; got {value!r}")
    return tuple(value)


def parse_rules(source: str | list | None) -> list[Rule]:
    """Read rules from YAML text or a list of dicts (Rule objects pass through).

    Example:
        >>> [r.effect for r in parse_rules("- deny: {namespaces: [kube-system]}")]
        ['deny']
    """
    data = yaml.safe_load(source) if isinstance(source, str) else source
    if isinstance(data, dict) and "rules" in data:
        data = data["rules"]
    if data is None:
        return []
    if not isinstance(data, list):
        raise RuleError(f"rules must be a list of mappings; got {type(data).__name__}")
    return [item if isinstance(item, Rule) else rule(item, i) for i, item in enumerate(data)]


DEFAULT_RULES = parse_rules([
    {"deny": {"verbs": ["delete"], "resources": ["persistentvolumes", "persistentvolumeclaims"]},
     "reason": "deleting PersistentVolumes or their claims loses data; free or rebind them with kubectl patch"},
    {"deny": {"verbs": ["delete"], "resources": ["namespaces"]}, "reason": "deleting a namespace deletes everything"},
    {"deny": {"verbs": ["delete"], "resources": ["statefulsets"]},
     "reason": "deleting a StatefulSet drops its stable identities; restart or patch it instead"},
    {"deny": {"namespaces": ["kube-system"]}, "reason": "nothing in kube-system may change"},
])


NO_TERMINAL = ("approval mode ask (--approval ask, or approval.mode in the config) needs a terminal to ask on, but "
               "stdin is not one; run the command in a terminal, or pass --approval auto (the rules still deny what "
               "they deny) or --approval deny")


def require_terminal(mode: str, stdin: TextIO | None = None) -> None:
    """Refuse ask mode at start when nobody can answer (stdin is not a terminal): ValueError saying what to pass.

    Example:
        >>> import io
        >>> require_terminal("auto", io.StringIO())
        >>> require_terminal("ask", io.StringIO())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: approval mode ask (--approval ask, or approval.mode in the config) needs a terminal ...
    """
    stream = stdin or sys.stdin
    if mode == "ask" and (stream is None or not stream.isatty()):
        raise ValueError(NO_TERMINAL)


class ApprovalPolicy:
    """Decide whether the executor may make a change: rules first (first match wins), then the mode.

    Args:
        mode: "auto" approves what no rule denies, "deny" refuses it, "ask" asks a person.
        rules: Rule objects, dicts or YAML text; DEFAULT_RULES when None.
        prompt: called with the question, returns the answer; None asks on the terminal through input().
        stdin: the terminal to check for ask mode without a prompt (sys.stdin when None).
        default_namespace: the namespace of commands that name none.
    """

    def __init__(self, mode: str = "auto", rules: list | str | None = None, prompt: Callable[[str], str] | None = None,
                 stdin: TextIO | None = None, default_namespace: str = "default"):
        if mode not in MODES:
            raise ValueError(f"unknown approval mode {mode!r}; use one of {', '.join(MODES)}")
        self.mode, self.prompt, self.stdin = mode, prompt, stdin
        self.rules = DEFAULT_RULES if rules is None else parse_rules(rules)
        self.default_namespace = default_namespace

    def decide(self, command: str, preview: str | None = None) -> Decision:
        """Approve or deny one command, given its dry-run preview.

        Example:
            >>> ApprovalPolicy("auto").decide("kubectl delete pvc data -n shop").status
            'denied'
        """
        try:
            facts = self.facts(command)
        except Refused as refused:
            return Decision("denied", f"The command could not be read for approval: {refused}")
        for index, rule_ in enumerate(self.rules):
            if rule_.applies(facts):
                status = "approved" if rule_.effect == "allow" else "denied"
                return Decision(status, f"Rule {index} ({rule_.effect}): {rule_.reason or 'no reason given'}.")
        if self.mode == "auto":
            return Decision("approved", "Auto mode approves changes that no rule denies.")
        if self.mode == "deny":
            return Decision("denied", "Deny mode refuses every change no rule allows — describe the fix in your "
                                      "report instead.")
        return self._ask(command, preview)

    def facts(self, command: str) -> list[Fact]:
        """Return what a command touches, as rules see it."""
        call = kubectl_call(command)
        verbs = tuple(dict.fromkeys((call.verb, call.path)))
        namespace = call.namespace or self.default_namespace
        found = targets(call) or [("", None)]
        return [Fact(verbs, res, None if res in CLUSTER_SCOPED else namespace, name) for res, name in found]

    def _ask(self, command: str, preview: str | None) -> Decision:
        """Ask a person through the prompt callable or the terminal; anything but yes denies."""
        if self.prompt is None and not (self.stdin or sys.stdin).isatty():
            return Decision("denied", "Ask mode needs a terminal but stdin is not a TTY — run interactively, pass a "
                                      "prompt callable, or use mode auto with rules.")
        shown = (preview or "")[:PREVIEW_LIMIT]
        question = (f"The executor wants to run:\n  {command}\n" + (f"Dry-run preview:\n{shown}\n" if shown else "")
                    + "Approve? [y/N] ")
        try:
            answer = (self.prompt or input)(question)
        except (EOFError, KeyboardInterrupt):
            return Decision("denied", "No answer came from the terminal, so the change was denied.")
        if answer.strip().lower() in ("y", "yes"):
            return Decision("approved", "The operator approved the change.")
        return Decision("denied", f"The operator declined the change (answered {answer.strip()!r}).")
