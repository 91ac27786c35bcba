"""What the Observer's prompt says, read from the context the Observer sends (contract.ObserverContext): the task,
the namespace, the budget left, and the sub-agents' reports as the prompt shows them.

A report's text holds `key: value` lines (JSON for lists and dicts). A report an LLM wrote in prose still counts:
without a parseable `diagnosis:` its text goes through keyword analysis. `reports` reads shown findings wherever a
context carries them (a compact Observer passes its findings on to the sub-agent: contract.SubAgentContext).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from aoi.models.expert import contract
from aoi.models.expert.taxonomy import label

FIELD = re.compile(r"^([a-z_]+): (.*)$")
PROSE = ((r"not authorized on", "db_unauthorized"), (r"SASL|[Aa]uthentication failed", "db_auth_failed"),
         (r"requireTLS|requireSSL", "db_tls"), (r"targetPort|target port", "port_mismatch"),
         (r"scaled to 0|replicas[:=]? ?0\b|0/0", "replicas_zero"),
         (r"node affinity|nodeSelector", "unschedulable_node"),
         (r"Released|claimRef", "stale_claim"), (r"PodChaos|NetworkChaos", "chaos"), (r"feature flag", "flag_enabled"),
         (r"CrashLoopBackOff", "crash_loop"), (r"\bPending\b", "pending"))
NULLS = ("None", "null", "")


@dataclass(kw_only=True)
class Report:
    """One sub-agent report."""

    iteration: int
    source: str
    instruction: str
    fields: dict = field(default_factory=dict)
    text: str = ""

    @property
    def diagnosis(self) -> dict | None:
        """Return the report's diagnosis: the structured one, else one guessed from its words."""
        value = self.fields.get("diagnosis")
        return value if isinstance(value, dict) and value.get("component") else _prose(self)


@dataclass(kw_only=True)
class Prompt:
    """What the Observer's prompt says."""

    task: str
    namespace: str
    iteration: int
    max_iterations: int
    steps_left: int
    reports: list[Report]


def read(context: contract.ObserverContext) -> Prompt:
    """Read what the Observer's prompt says from the context it sent.

    Example:
        >>> shown = contract.ShownFinding(iteration=1, source="probe", instruction="Survey namespace shop",
        ...                               text='suspects: ["api"]')
        >>> p = read(contract.ObserverContext(task_type="localization", namespace="shop", iteration=2,
        ...                                   max_iterations=14, steps_left=26, findings=(shown,)))
        >>> (p.task, p.namespace, p.steps_left, p.reports[0].fields["suspects"])
        ('localization', 'shop', 26, ['api'])
    """
    return Prompt(task=context.task_type, namespace=context.namespace, iteration=context.iteration,
                  max_iterations=context.max_iterations, steps_left=context.steps_left,
                  reports=reports(context.findings))


def reports(shown: tuple[contract.ShownFinding, ...]) -> list[Report]:
    """Read the fields of the reports as a prompt shows them."""
    return [Report(iteration=f.iteration, source=f.source, instruction=f.instruction, fields=_fields(f.text),
                   text=f.text) for f in shown]


def best_diagnosis(reports: list[Report]) -> dict | None:
    """Return the most confident diagnosis reported so far (the later one on ties).

    Example:
        >>> def report(i, component, confidence):
        ...     diagnosis = {"component": component, "confidence": confidence}
        ...     return Report(iteration=i, source="probe", instruction="", fields={"diagnosis": diagnosis})
        >>> best_diagnosis([report(1, "a", 0.5), report(2, "b", 0.9)])["component"]
        'b'
    """
    found = [r.diagnosis for r in reports if r.source == "probe" and r.diagnosis]
    found = [d for d in found if isinstance(d.get("confidence", 0), (int, float))]
    return max(reversed(found), key=lambda d: d.get("confidence", 0), default=None)


def _fields(chunk: str) -> dict:
    """Read `key: value` lines; values that are JSON are decoded."""
    found = {}
    for line in chunk.splitlines():
        match = FIELD.match(line)
        if not match:
            continue
        key, value = match.groups()
        try:
            found[key] = None if value.strip() in NULLS else json.loads(value)
        except ValueError:
            found[key] = value
    return found


def _prose(report: Report) -> dict | None:
    """Guess a diagnosis from a report's words when it has no structured one."""
    if report.source != "probe" or "diagnosis" in report.fields:
        return None
    suspects = report.fields.get("suspects")
    component = suspects[0] if isinstance(suspects, list) and suspects else None
    for pattern, kind in PROSE:
        if re.search(pattern, report.text):
            tag = label(kind)
            return {"component": component or "", "system_level": tag.system_level, "fault_type": tag.fault_type,
                    "kind": kind, "confidence": round(tag.confidence * 0.9, 2), "fix": [], "facts": {}}
    return None
