"""Compose evidence into diagnoses: which component, which symptom class, how sure, and the fix it allows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoi.models.expert import playbooks
from aoi.models.expert.analyzers import Evidence, by_kind
from aoi.models.expert.analyzers.traces import most_failing
from aoi.models.expert.taxonomy import label

DIRECT = ("port_mismatch", "replicas_zero", "image_unlike_siblings", "command_unlike_siblings")
WEAK = ("crash_loop", "not_ready", "restarted", "pending", "image_pull", "unavailable", "trace_errors",
        "slow_service", "cpu_hot", "packet_drops", "refused", "db_unreachable", "recreated")
DESTRUCTIVE = ("revokeRolesFromUser", "dropUser")
WANTED_OP = {"db_unauthorized": "grantRolesToUser", "db_auth_failed": "createUser"}


@dataclass(kw_only=True)
class Diagnosis:
    """A candidate root cause."""

    kind: str
    component: str
    confidence: float
    evidence: list[str]
    facts: dict = field(default_factory=dict)
    fix: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        """Return the diagnosis as the probe reports it."""
        tag = label(self.kind)
        return {"component": self.component, "system_level": tag.system_level, "fault_type": tag.fault_type,
                "kind": self.kind, "confidence": round(self.confidence, 2), "evidence": self.evidence[:4],
                "fix": self.fix, "facts": self.facts}


def diagnose(evidence: list[Evidence], ns: str) -> list[Diagnosis]:
    """Return the candidate diagnoses, most likely first.

    Example:
        >>> ev = [Evidence("crash_loop", "api", "pod api-1 is CrashLoopBackOff"),
        ...       Evidence("replicas_zero", "db", "deployment db is scaled to 0", {"replicas": 1})]
        >>> [(d.kind, d.component, d.fix) for d in diagnose(ev, "shop")][0]
        ('replicas_zero', 'db', ['kubectl scale deployment db -n shop --replicas=1'])
    """
    found = []
    for rule in (_direct, _chaos, _node, _claims, _database, _tls, _flags, _dns, _weak):
        found += rule(evidence)
    for d in found:
        d.fix = d.fix or playbooks.fix(d.kind, d.component, d.facts, ns)
        d.confidence = min(1.0, d.confidence + (0.05 if d.fix and d.confidence >= 0.8 else 0.0))
    order = {id(d): i for i, d in enumerate(found)}
    return sorted(found, key=lambda d: (-d.confidence, order[id(d)]))


def _make(kind: str, component: str, support: list[Evidence], facts: dict | None = None,
          confidence: float | None = None) -> Diagnosis:
    known = max((e.facts.get("confidence", 0) for e in support), default=0)
    return Diagnosis(kind=kind, component=component, confidence=max(confidence or label(kind).confidence, known),
                     evidence=list(dict.fromkeys(e.detail for e in support)), facts=facts or {})


def _direct(ev: list[Evidence]) -> list[Diagnosis]:
    """Symptoms that are their own root cause (misconfigured objects, a scaled-down deployment)."""
    return [_make(e.kind, e.component, [e], dict(e.facts)) for e in by_kind(ev, *DIRECT)]


def _chaos(ev: list[Evidence]) -> list[Diagnosis]:
    """An experiment that injects failures into a component."""
    out = []
    for e in by_kind(ev, "chaos", "network_chaos"):
        kind = "network_chaos" if "network" in str(e.facts.get("kind", "")).lower() else "chaos"
        out.append(_make(kind, e.component, [e], dict(e.facts)))
    return out


def _node(ev: list[Evidence]) -> list[Diagnosis]:
    """Pods that cannot be scheduled because of a node selector."""
    pinned = {e.component for e in by_kind(ev, "node_selector")}
    out = []
    for e in by_kind(ev, "unschedulable_selector", "unschedulable_node"):
        sure = e.component in pinned or e.kind == "unschedulable_node"
        support = [e] + [p for p in by_kind(ev, "node_selector") if p.component == e.component]
        out.append(_make("unschedulable_node", e.component, support, {}, None if sure else 0.8))
    return out


def _claims(ev: list[Evidence]) -> list[Diagnosis]:
    """Claims stuck Pending while volumes stay Released with stale claimRefs."""
    released = by_kind(ev, "volume_released")
    known = by_kind(ev, "stale_claim")
    if not released and not known:
        return []
    waiting = by_kind(ev, "unbound_claim", "claim_pending", "pending")
    volumes = [e.facts["volume"] for e in released] or (known[0].facts.get("volumes", []) if known else [])
    component = next((e.component for e in by_kind(ev, "unbound_claim")), None) or \
        (known[0].component if known else released[0].facts["claim"].split("/")[-1])
    return [_make("stale_claim", component, released + waiting[:2] + known, {"volumes": volumes},
                  None if waiting or known else 0.6)]


def _database(ev: list[Evidence]) -> list[Diagnosis]:
    """A database that rejects its clients' user (role revoked or user gone), with the script that restores it."""
    out = []
    for kind, op in WANTED_OP.items():
        hits = by_kind(ev, kind)
        for host in dict.fromkeys(e.component for e in hits):
            support = [e for e in hits if e.component == host]
            facts = _merge(support, "clients", "client")
            script = next((e.facts["script"] for e in support if e.facts.get("script")), None) or \
                _script(ev, op, host)
            facts.update({"script": script} if script else {})
            out.append(_make(kind, host, support, facts))
    return out


def _script(ev: list[Evidence], op: str, host: str) -> str | None:
    """Return the path of a mounted script that runs `op` with credentials and destroys nothing."""
    mounts = next((e.facts["mounts"] for e in by_kind(ev, "mounts") if e.component == host), {})
    for e in by_kind(ev, "script"):
        ops = e.facts.get("ops", [])
        if op in ops and e.facts.get("authenticated") and not set(ops) & set(DESTRUCTIVE) and e.component in mounts:
            return f"{mounts[e.component].rstrip('/')}/{e.facts['key']}"
    return None


def _tls(ev: list[Evidence]) -> list[Diagnosis]:
    """Clients that cannot reach a database that requires TLS."""
    out = []
    tls_hosts = {e.component for e in by_kind(ev, "tls_in_use")}
    mounts = {e.component: e.facts["mounts"] for e in by_kind(ev, "mounts")}
    for host in dict.fromkeys(e.component for e in by_kind(ev, "db_unreachable", "db_tls")):
        support = [e for e in by_kind(ev, "db_unreachable", "db_tls") if e.component == host]
        configs = [e for e in by_kind(ev, "tls_required") if e.component in mounts.get(host, {}) or e.component == host]
        if not configs and host not in tls_hosts and not any(e.kind == "db_tls" for e in support):
            continue
        facts = _merge(support, "clients", "client")
        facts.update({k: v for e in configs for k, v in e.facts.items() if k in ("configmap", "key", "fixed")})
        out.append(_make("db_tls", host, support + configs + [e for e in by_kind(ev, "tls_in_use")
                                                              if e.component == host], facts))
    return out


def _flags(ev: list[Evidence]) -> list[Diagnosis]:
    """A feature flag that is on: the component is where the traces fail, else the one its description names."""
    names = _names(ev)
    failing = most_failing(ev)
    errors = {e.component for e in by_kind(ev, "trace_errors")}
    out = []
    for e in by_kind(ev, "flag_enabled"):
        facts = dict(e.facts)
        named = facts.get("named") or _named(facts.get("description", ""), facts.get("flag", ""), names)
        facts["named"] = named
        readers = [m.component for m in by_kind(ev, "mounts") if facts.get("configmap") in m.facts.get("mounts", {})]
        facts["readers"] = facts.get("readers") or readers
        component, sure = named or e.component, bool(by_kind(ev, "trace_errors", "traces_seen"))
        if failing and named not in errors:
            component = failing
        out.append(_make("flag_enabled", component, [e], facts, 0.9 if sure else None))
    return out


def _names(ev: list[Evidence]) -> list[str]:
    """Return the component names the evidence has seen (deployments, traced services)."""
    seen = [e.component for e in by_kind(ev, "mounts", "trace_errors", "slow_service", "traces_seen")]
    return list(dict.fromkeys(seen + [n for e in by_kind(ev, "names") for n in e.facts.get("names", [])]))


def _named(description: str, flag: str, names: list[str]) -> str | None:
    """Return the component a flag's description (or, failing that, its name) mentions first.

    Example:
        >>> _named("Flood the web tier with requests", "webFlood", ["web", "web-proxy", "db"])
        'web'
    """
    text = " " + re.sub(r"[^a-z0-9]+", " ", description.lower()) + " "
    spots = [(text.find(f" {n.replace('-', ' ')} "), -len(n), n) for n in names]
    spots = [s for s in spots if s[0] >= 0]
    if spots:
        return min(spots)[2]
    words = re.sub(r"([A-Z])", r" \1", flag).lower().split()
    prefixes = ["-".join(words[:i]) for i in range(len(words), 0, -1)]
    return next((p for p in prefixes if p in names), None)


def _dns(ev: list[Evidence]) -> list[Diagnosis]:
    """A caller that resolves a host name no Service has: its own settings point nowhere."""
    names = set(_names(ev))
    return [_make("dns_misconfig", e.facts.get("client", e.component), [e], {"host": e.facts.get("name")})
            for e in by_kind(ev, "unresolved") if e.facts.get("name") not in names]


def _weak(ev: list[Evidence]) -> list[Diagnosis]:
    """Symptoms without an explanation yet: kept as weak candidates, one per component and kind."""
    seen, out = set(), []
    for e in by_kind(ev, *WEAK):
        if (e.kind, e.component) not in seen:
            seen.add((e.kind, e.component))
            out.append(_make(e.kind, e.component, [e], {k: v for k, v in e.facts.items() if k in ("pod", "client")}))
    return out


def _merge(support: list[Evidence], plural: str, single: str) -> dict:
    """Return the facts of the support, with the singular fact collected into a list."""
    facts = {k: v for e in support for k, v in e.facts.items() if k not in ("line", "pod", single, "confidence")}
    values = [v for e in support for v in ([e.facts.get(single)] + list(e.facts.get(plural) or [])) if v]
    facts[plural] = list(dict.fromkeys(values))
    return facts
