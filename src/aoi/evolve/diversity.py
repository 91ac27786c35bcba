"""How new a scenario is: its distance from the seeds and from the rest of its group, by meaning and by structure.

Meaning is the sentence embedder's cosine over the scenario's text (description, root cause, symptoms); structure is
the Jaccard overlap of what the fault does (verbs, resource kinds, the resources and fields it touches, the fault
type, system level and components). A renamed copy of a seed keeps the seed's structure and nearly its text, so it
sits close; a different fault kind, resource or component moves both measures.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aoi.models.embedder import Embedder, cosine, default_embedder

TEXT_WEIGHT = 0.5  # share of meaning in the similarity; the rest is structure
KIND_WORDS = {"deploy": "deployment", "deployments": "deployment", "svc": "service", "services": "service",
              "po": "pod", "pods": "pod", "cm": "configmap", "configmaps": "configmap", "secrets": "secret",
              "pvc": "persistentvolumeclaim", "sts": "statefulset", "rs": "replicaset", "ns": "namespace"}
VERBS = ("patch", "delete", "scale", "set", "apply", "create", "replace", "exec", "label", "annotate", "rollout",
         "cordon", "taint", "drain", "expose", "autoscale")


@dataclass(frozen=True)
class Nearest:
    """A scenario's distance to its nearest neighbour, and which one it is (a seed or a group member)."""

    distance: float
    neighbour: str
    text_similarity: float
    structure_similarity: float

    def evidence(self) -> str:
        """Return one line saying how far the nearest scenario is and why."""
        return (f"nearest: {self.neighbour} (distance {self.distance:.2f}; text similarity "
                f"{self.text_similarity:.2f}, structure overlap {self.structure_similarity:.2f})")


def scenario_text(scenario) -> str:
    """Return the text the embedder compares: description, root cause, symptoms' descriptions.

    Example:
        >>> from types import SimpleNamespace as S
        >>> cause = S(fault_type="x", system_level="Application", components=("geo",))
        >>> scenario_text(S(description="d", root_cause=cause, symptoms=[S(description="pods crash")]))
        'd\\nroot cause: x at Application level in geo\\npods crash'
    """
    cause = scenario.root_cause
    lines = [scenario.description,
             f"root cause: {cause.fault_type} at {cause.system_level} level in {', '.join(cause.components)}"]
    return "\n".join(lines + [s.description for s in scenario.symptoms if s.description])


def structure(scenario) -> frozenset[str]:
    """Return the scenario's structural features: what its fault does to which resources, and its root cause.

    Example:
        >>> from types import SimpleNamespace as S
        >>> cause = S(fault_type="Misconfig", system_level="Application", components=("geo",))
        >>> features = structure(S(fault=[{"kubectl": "kubectl scale deploy/geo --replicas=0 -n x"}], root_cause=cause))
        >>> sorted(f for f in features if not f.startswith(("component", "fault_type", "system_level")))
        ['kind:deployment', 'op:scale/deployment', 'target:deployment/geo', 'verb:scale']
    """
    cause = scenario.root_cause
    features = {f for op in scenario.fault for f in _op_features(op)}
    features |= {f"fault_type:{cause.fault_type}", f"system_level:{cause.system_level}"}
    return frozenset(features | {f"component:{c}" for c in cause.components})


def _op_features(op: Mapping) -> set[str]:
    """Return one fault operation's features: verb, kind, target, and the fields a patch sets."""
    if "api" in op:
        call = op["api"]
        verb, kind, name = str(call.get("verb", "")), str(call.get("kind", "")).lower(), str(call.get("name", ""))
        paths = _paths(call.get("patch") or call.get("body") or {})
    else:
        verb, kind, name, paths = _kubectl_parts(str(op.get("kubectl", "")))
    features = {f"verb:{verb}", f"kind:{kind}", f"op:{verb}/{kind}", f"target:{kind}/{name}"}
    return {f for f in features if not f.endswith((":", "/"))} | {f"field:{p}" for p in paths}


def _kubectl_parts(command: str) -> tuple[str, str, str, set[str]]:
    """Return (verb, kind, name, patched field paths) of a kubectl command line (blank parts when absent)."""
    words = [w for w in command.replace("=", " ").split() if not w.startswith("-")][1:]
    verb = next((w for w in words if w in VERBS), "")
    rest = words[words.index(verb) + 1:] if verb else words
    if verb in ("set", "rollout") and rest:
        verb, rest = f"{verb}-{rest[0]}", rest[1:]
    kind, _, name = (rest[0] if rest else "").partition("/")
    if not name and len(rest) > 1:
        name = rest[1]
    return verb, KIND_WORDS.get(kind, kind), name, _paths(_json_in(command))


def _json_in(command: str):
    """Return the JSON object a command carries (a -p patch), or {}."""
    start = command.find("{") if "{" in command else command.find("[")
    end = max(command.rfind("}"), command.rfind("]"))
    try:
        return json.loads(command[start:end + 1].strip("'\"")) if start >= 0 else {}
    except json.JSONDecodeError:
        return {}


def _paths(value, prefix: str = "") -> set[str]:
    """Return the dotted key paths of a nested value (list positions dropped: they name no field)."""
    if isinstance(value, Mapping):
        return {p for k, v in value.items() for p in (_paths(v, f"{prefix}.{k}" if prefix else str(k)) or {
            f"{prefix}.{k}" if prefix else str(k)})}
    if isinstance(value, list):
        return {p for v in value for p in _paths(v, prefix)}
    return set()


def jaccard(a: frozenset, b: frozenset) -> float:
    """Return |a & b| / |a | b| (1.0 for two empty sets).

    Example:
        >>> jaccard(frozenset("ab"), frozenset("bc"))
        0.3333333333333333
    """
    return len(a & b) / len(a | b) if a | b else 1.0


class Novelty:
    """Score scenarios by distance from a fixed set of seeds (embedded once) and from each other."""

    def __init__(self, seeds: Sequence = (), embedder: Embedder | None = None):
        self.embedder = embedder or default_embedder()
        vectors = self.embedder.embed([scenario_text(s) for s in seeds])  # one batch: the seeds are embedded once
        self.seeds = [(f"seed {s.id}", v, structure(s)) for s, v in zip(seeds, vectors, strict=True)]

    def nearest(self, group: Sequence) -> list[Nearest | None]:
        """Return each scenario's nearest neighbour among the seeds and the rest of the group (None: nothing near)."""
        vectors = self.embedder.embed([scenario_text(s) for s in group])
        members = [(f"group member {s.id}", v, structure(s)) for s, v in zip(group, vectors, strict=True)]
        return [_closest(members[i], self.seeds + members[:i] + members[i + 1:]) for i in range(len(group))]


def _closest(me: tuple, others: list[tuple]) -> Nearest | None:
    """Return the nearest of `others` to `me` (name, vector, structure), or None when there are none."""
    best = None
    for name, vector, features in others:
        text, shape = max(cosine(me[1], vector), 0.0), jaccard(me[2], features)
        distance = 1.0 - (TEXT_WEIGHT * text + (1 - TEXT_WEIGHT) * shape)
        if best is None or distance < best.distance:
            best = Nearest(round(distance, 4), name, round(text, 4), round(shape, 4))
    return best
