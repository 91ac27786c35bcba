"""The instructions the expert Observer writes and the expert Probe reads: plain sentences an LLM could follow too.

Each focus is one kind of check. `render` writes an instruction; `parse` reads one back, tolerating instructions
written by another model (keywords decide the focus; the namespace comes from the text or the context). The known
diagnosis is the context's `known:` line, else the most confident one among the findings the context shows (a
compact Observer passes the team's findings on instead of writing a context: contract.SubAgentContext.findings).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from aoi.models.expert.contract import ShownFinding
from aoi.models.expert.findings import best_diagnosis, reports

TEMPLATES = {
    "survey": "Survey namespace {ns}: list the pods, the Warning events, the deployments (replicas, images, "
              "commands, node selectors) and any Chaos Mesh experiments; report what is unhealthy.",
    "services": "Check the Services of namespace {ns}: compare each Service's targetPort with the container ports "
                "of the pods it selects, and list Services without endpoints.",
    "config": "Check configuration and storage in namespace {ns}: the ConfigMaps (feature flags, database "
              "configs), which deployments mount them, and the PersistentVolumeClaims and PersistentVolumes.",
    "telemetry": "Read the telemetry of namespace {ns}: export traces (failed spans and latency per service) and "
                 "metrics (CPU per pod).",
    "logs": "Read the logs of pods {targets} in namespace {ns} (the previous container too where it restarted) "
            "and report the errors.",
    "database": "Inspect the database {targets} in namespace {ns}: its mounted ConfigMaps (scripts, mongod.conf), "
                "its log, and what restores access for its clients.",
    "verify": "Verify namespace {ns} after the fix: are all pods Ready and the deployments available, and is the "
              "fault gone?",
    "continue": "Continue the checks {targets} in namespace {ns} and report what is unhealthy.",
}
KEYWORDS = (("verify", ("verify", "after the fix", "confirm the fix", "is the fault gone")),
            ("logs", ("logs of", " log ", "logs")),
            ("database", ("database", "mongo")),
            ("services", ("targetport", "endpoints", "service ports", "services of")),
            ("config", ("configmap", "configuration", "feature flag", "persistentvolume", "storage")),
            ("telemetry", ("telemetry", "trace", "metric", "latency", "cpu")))
NAMESPACE = re.compile(r"(?:namespace[:\s]+|-n\s+|--namespace[=\s]+)([a-z0-9][a-z0-9-]*[a-z0-9])")


@dataclass
class Instruction:
    """A parsed instruction: what to check, where, on what, and what is already known."""

    focus: str
    namespace: str | None
    targets: list[str] = field(default_factory=list)
    known: dict | None = None  # the current best diagnosis, passed on in the context


def render(focus: str, namespace: str, targets: list[str] | None = None) -> str:
    """Write the instruction of a focus.

    Example:
        >>> print(render("logs", "shop", ["api-1", "db-2"]))  # doctest: +NORMALIZE_WHITESPACE
        Read the logs of pods api-1, db-2 in namespace shop (the previous container too where it restarted)
        and report the errors.
    """
    return TEMPLATES[focus].format(ns=namespace, targets=", ".join(targets or []))


def context(namespace: str, known: dict | None = None) -> str:
    """Write the context line(s) that travel with an instruction.

    Example:
        >>> context("shop", {"component": "api"})
        'namespace: shop\\nknown: {"component": "api"}'
    """
    return f"namespace: {namespace}" + (f"\nknown: {json.dumps(known, separators=(', ', ': '))}" if known else "")


def parse(instruction: str, context_text: str = "", findings: tuple[ShownFinding, ...] = ()) -> Instruction:
    """Read an instruction (and its context, and the findings that context shows) back.

    Example:
        >>> i = parse(render("database", "shop", ["orders-db"]), context("shop", {"kind": "x"}))
        >>> (i.focus, i.namespace, i.targets, i.known)
        ('database', 'shop', ['orders-db'], {'kind': 'x'})
    """
    focus = _focus(instruction)
    match = NAMESPACE.search(instruction) or NAMESPACE.search(context_text)
    known = _known(context_text, findings)
    return Instruction(focus, match.group(1) if match else None, _targets(focus, instruction), known)


def _focus(text: str) -> str:
    """Return the focus a (possibly free-form) instruction asks for."""
    for focus, template in TEMPLATES.items():
        if text.startswith(template.split("{")[0]):
            return focus
    lowered = f" {text.lower()} "
    return next((focus for focus, words in KEYWORDS if any(w in lowered for w in words)), "survey")


def _targets(focus: str, text: str) -> list[str]:
    """Return the pods or components an instruction names."""
    if focus == "logs":
        match = re.search(r"logs of (?:pods? )?(.+?) in namespace", text)
        names = re.split(r"[,\s]+(?:and\s+)?", match.group(1)) if match else []
        return [n for n in names if re.fullmatch(r"[a-z0-9][a-z0-9.-]*", n)]
    if focus == "database":
        match = re.search(r"database ([a-z0-9][a-z0-9.-]*)", text)
        return [match.group(1)] if match else []
    if focus == "continue":
        match = re.search(r"checks (.+?) in namespace", text)
        return re.split(r",\s*", match.group(1)) if match else []
    return []


def _known(text: str, findings: tuple[ShownFinding, ...]) -> dict | None:
    """Return the diagnosis the context passes on (its `known:` line, else the best its findings report), if any."""
    match = re.search(r"^known: (\{.*\})\s*$", text, re.MULTILINE)
    if not match:
        return best_diagnosis(reports(findings))
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
