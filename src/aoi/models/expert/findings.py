"""Read the Observer's prompt back: the task, the namespace, the budget left, and the sub-agents' reports.

Reports arrive as `key: value` lines (JSON for lists and dicts) under headers like `[2] probe on "...":`. A report
an LLM wrote in prose still counts: without a parseable `diagnosis:` its text goes through keyword analysis.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from aoi.models.expert import contract
from aoi.models.expert.taxonomy import label
from aoi.tasks import TaskType

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


def parse(text: str) -> Prompt:
    """Parse the Observer's user prompt.

    Example:
        >>> p = parse('Task (localization):\\nNamespace: shop\\nIteration 2 of 14; environment actions left: 26.\\n'
        ...           'Findings so far (from the probe and the executor):\\n[1] probe on "Survey namespace shop":\\n'
        ...           'suspects: ["api"]\\nYour recent decisions:\\n')
        >>> (p.task, p.namespace, p.steps_left, p.reports[0].fields["suspects"])
        ('localization', 'shop', 26, ['api'])
    """
    task, namespace = contract.TASK.search(text), contract.NAMESPACE.search(text)
    counts = contract.COUNTS.search(text)
    body = text.split(contract.FINDINGS, 1)[-1].split(contract.DECISIONS, 1)[0]
    return Prompt(task=task.group(1) if task else TaskType.DETECTION, namespace=namespace.group(1) if namespace else "",
                  iteration=int(counts.group(1)) if counts else 1,
                  max_iterations=int(counts.group(2)) if counts else 14,
                  steps_left=int(counts.group(3)) if counts else 30, reports=reports(body))


def reports(body: str) -> list[Report]:
    """Split the findings into reports and read their fields."""
    heads = list(contract.HEADER.finditer(body))
    out = []
    for i, head in enumerate(heads):
        chunk = body[head.end():heads[i + 1].start() if i + 1 < len(heads) else len(body)]
        out.append(Report(iteration=int(head.group(1)), source=head.group(2), instruction=head.group(3),
                          fields=_fields(chunk), text=chunk.strip()))
    return out


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
