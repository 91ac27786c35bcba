"""Analyzers: plain functions from kubectl, log and telemetry text to Evidence, in the spirit of K8sGPT's."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Evidence:
    """One observed fact that matters for a diagnosis.

    `kind` names the symptom class (aoi.models.expert.taxonomy maps it to AIOpsLab's labels), `component` the
    Deployment, Service or object it is about, `detail` one line for people, `facts` what playbooks need. Frozen,
    and its facts are never changed either: the Probe keeps the evidence of each output it read (checks.analyzed).
    """

    kind: str
    component: str
    detail: str
    facts: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return self.detail


def by_kind(evidence: list[Evidence], *kinds: str) -> list[Evidence]:
    """Return the evidence of the given kinds, in order.

    Example:
        >>> [e.component for e in by_kind([Evidence("a", "x", ""), Evidence("b", "y", "")], "b")]
        ['y']
    """
    return [e for e in evidence if e.kind in kinds]
