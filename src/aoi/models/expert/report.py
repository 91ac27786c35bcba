"""The Probe's report: findings, anomalies, suspects, the diagnosis (with its fix) and the leads left to follow."""

from __future__ import annotations

from aoi.models.expert import instructions, rules
from aoi.models.expert.analyzers import Evidence, by_kind
from aoi.models.expert.checks import Seen
from aoi.models.expert.instructions import Instruction
from aoi.models.expert.taxonomy import FAULT_THRESHOLD, ROOT_THRESHOLD, label

WHY = {"namespaces": "find the application namespace", "pods": "list the pods and their states",
       "events": "read the Warning events", "deployments": "compare the deployments (replicas, images, commands)",
       "chaos": "look for Chaos Mesh experiments", "services": "read the Services' ports and selectors",
       "pod_ports": "read the pods' container ports", "endpoints": "find Services without endpoints",
       "configmaps": "list the ConfigMaps", "flags": "read the feature flags", "mounts": "see who mounts which "
       "ConfigMap", "claims": "check the PersistentVolumeClaims", "volumes": "check the PersistentVolumes",
       "traces": "export the traces", "trace_summary": "aggregate the spans per service", "metrics": "export "
       "the metrics", "cpu": "compare CPU use per pod", "drops": "compare dropped packets per pod",
       "logs": "read the log", "db_describe": "see what the "
       "database mounts", "db_config": "read the database's ConfigMaps", "db_logs": "read the database's log",
       "verify_pods": "check the pods after the fix", "verify_deployments": "check the deployments after the fix",
       "verify_services": "check the Services after the fix", "verify_pod_ports": "read the pods' ports again",
       "verify_claims": "check the claims after the fix", "verify_config": "check the ConfigMap after the fix",
       "previous": "read the previous container's log"}
LOGGABLE = ("crash_loop", "not_ready", "restarted", "recreated")
HIDDEN_FACTS = ("fixed", "line", "confidence", "fix")
BAD = ("crash_loop", "image_pull", "pending", "not_ready", "port_mismatch", "replicas_zero", "claim_pending",
       "tls_required", "flag_enabled", "unavailable")


def build(ev: list[Evidence], seen: Seen, instruction: Instruction, ns: str, unrun: list[str] = ()) -> dict:
    """Return the finish arguments of a probe run; `unrun` checks that did not fit the budget become a lead."""
    diagnoses = rules.diagnose(ev, ns)
    best = diagnoses[0] if diagnoses and diagnoses[0].confidence >= FAULT_THRESHOLD else None
    anomalies = list(dict.fromkeys(e.detail for e in ev if e.detail and not e.detail.startswith("known") and
                                   label(e.kind).confidence >= FAULT_THRESHOLD))[:8]
    suspects = list(dict.fromkeys(d.component for d in diagnoses if d.confidence >= FAULT_THRESHOLD))[:4]
    out = {"findings": _paragraph(seen, ns, anomalies, best), "anomalies": anomalies, "suspects": suspects,
           "diagnosis": _public(best.as_dict()) if best else None}
    if instruction.focus == "verify":
        remaining = [e.detail for e in ev if e.kind in BAD]
        out["healthy"] = not remaining
        return out
    out["leads"] = leads(ev, seen, instruction, ns, best)
    if unrun:
        out["leads"].append(instructions.render("continue", ns, list(unrun)))
    return out


def _public(diagnosis: dict) -> dict:
    """Return a diagnosis without the bulky facts only playbooks need."""
    facts = {k: v for k, v in diagnosis["facts"].items() if k not in HIDDEN_FACTS}
    return diagnosis | {"facts": facts}


def _paragraph(seen: Seen, ns: str, anomalies: list[str], best) -> str:
    """Write the findings in one paragraph."""
    checked = ", ".join(dict.fromkeys(WHY.get(s.check.split(":")[0], s.check) for s in seen.steps))
    text = f"In namespace {ns} I checked: {checked or 'nothing'}. "
    if not anomalies and not best:
        return text + "Nothing abnormal."
    text += f"Anomalies: {'; '.join(anomalies[:3])}. " if anomalies else ""
    if best:
        tag = label(best.kind)
        text += (f"Most likely cause: {best.kind.replace('_', ' ')} in {best.component} ({tag.system_level}, "
                 f"{tag.fault_type}; confidence {best.confidence:.2f}).")
    return text.strip()


def log_leads(ev: list[Evidence], seen: Seen, limit: int = 3) -> list[str]:
    """Return pods whose logs would explain what the evidence shows, worst first, that were not read yet."""
    pods = []
    for kind in LOGGABLE:
        pods += [e.facts["pod"] for e in by_kind(ev, kind) if e.facts.get("pod")]
    return [p for p in dict.fromkeys(pods) if not seen.ran(f"logs:{p}")][:limit]


def leads(ev: list[Evidence], seen: Seen, instruction: Instruction, ns: str, best) -> list[str]:
    """Return the follow-up instructions the evidence asks for, most useful first."""
    out = []
    if best is not None and best.confidence >= ROOT_THRESHOLD and (best.fix or best.kind in ("chaos",
                                                                                             "network_chaos")):
        return _confirm(best, seen, ns)
    database = _database_lead(ev, best)
    if database and database != instruction.targets:
        out.append(instructions.render("database", ns, database))
    pods = log_leads(ev, seen)
    if pods:
        out.append(instructions.render("logs", ns, pods))
    if by_kind(ev, "unbound_claim", "claim_provisioning", "claim_pending") and not by_kind(ev, "volume_released"):
        out.append(instructions.render("config", ns))
    if by_kind(ev, "refused", "no_endpoints"):
        out.append(instructions.render("services", ns))
    return out + _confirm(best, seen, ns) if best is not None else out


def _database_lead(ev: list[Evidence], best) -> list[str]:
    """Return the database to inspect when a client cannot use it and no fix is known yet."""
    if best is not None and best.kind in ("db_unauthorized", "db_auth_failed", "db_tls", "db_unreachable") \
            and not best.fix:
        return [best.component]
    hosts = [e.component for e in by_kind(ev, "db_unreachable", "db_unauthorized", "db_auth_failed")]
    return hosts[:1]


def _confirm(best, seen: Seen, ns: str) -> list[str]:
    """Return the check that would confirm where a flag's failures surface, when traces were not read yet."""
    if best.kind == "flag_enabled" and not seen.ran("trace_summary"):
        return [instructions.render("telemetry", ns)]
    return []
