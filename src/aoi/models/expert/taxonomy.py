"""Symptom classes mapped to AIOpsLab's RCA taxonomy (system level, fault type) and to how sure they make us.

AIOpsLab labels a fault by where it lives and what kind it is. The list below files each symptom class the
analyzers recognise the way AIOpsLab's taxonomy does (class: what it shows -> system level, fault type: why); the
reasons are domain knowledge, not problem knowledge:

- port_mismatch: a Service targets a port its pods do not listen on -> Virtualization, Misconfiguration: a Kubernetes
  object is misconfigured.
- replicas_zero: a Deployment scaled to 0 while its siblings run -> Virtualization, Operation Error: an operator
  action took the workload away.
- unschedulable_node: pods Pending on a nodeSelector no node matches -> Virtualization, Dependency Problem: the
  workload depends on a node that does not exist.
- stale_claim: claims Pending while matching volumes stay Released -> Virtualization, Operation Error: a redeploy left
  volumes bound to deleted claims.
- image_unlike_siblings: a Deployment runs an image unlike its siblings' -> Application, Misconfiguration: a build
  with the wrong configuration was deployed.
- command_unlike_siblings: a Deployment runs another service's binary -> Application, Network/Storage Issue: it
  listens on the other's port and uses the other's store; AIOpsLab files it as a network/storage issue.
- db_unauthorized: the app user lacks its role ("not authorized on DB") -> Application, Authentication Issue:
  authorization inside the database.
- db_auth_failed: the app user is gone (SASL authentication failed) -> Application, Network/Storage Issue: the storage
  layer lost its user; AIOpsLab files it as network/storage.
- db_tls: clients cannot connect because the database requires TLS -> Application, Misconfiguration: the database's
  own config is wrong.
- flag_enabled: a feature flag that injects failures is on -> Application, Misconfiguration: application
  configuration.
- chaos: a Chaos Mesh experiment targets the component -> Virtualization, Operation Error / Network/Storage Issue:
  injected from outside the app.
- dns_misconfig: a caller resolves a host that does not exist -> Application, Misconfiguration: the caller's settings
  point nowhere.
- crash_loop, not_ready, pending, restarted, trace/metric outliers -> Application, Code Defect: unexplained symptoms:
  weak, kept as leads.
"""

from __future__ import annotations

from typing import NamedTuple


class Label(NamedTuple):
    """How a symptom class is filed and how strongly it identifies the root cause (0..1)."""

    system_level: str
    fault_type: str
    confidence: float


LABELS = {
    "port_mismatch": Label("Virtualization", "Misconfiguration", 0.95),
    "replicas_zero": Label("Virtualization", "Operation Error", 0.95),
    "unschedulable_node": Label("Virtualization", "Dependency Problem", 0.95),
    "stale_claim": Label("Virtualization", "Operation Error", 0.9),
    "image_unlike_siblings": Label("Application", "Misconfiguration", 0.9),
    "command_unlike_siblings": Label("Application", "Network/Storage Issue", 0.9),
    "db_unauthorized": Label("Application", "Authentication Issue", 0.85),
    "db_auth_failed": Label("Application", "Network/Storage Issue", 0.85),
    "db_tls": Label("Application", "Misconfiguration", 0.85),
    "flag_enabled": Label("Application", "Misconfiguration", 0.7),  # 0.9 once traces say where it fails
    "chaos": Label("Virtualization", "Operation Error", 0.92),
    "network_chaos": Label("Virtualization", "Network/Storage Issue", 0.92),
    "dns_misconfig": Label("Application", "Misconfiguration", 0.6),
    "db_unreachable": Label("Application", "Network/Storage Issue", 0.5),
    "refused": Label("Virtualization", "Misconfiguration", 0.5),
    "crash_loop": Label("Application", "Code Defect", 0.45),
    "image_pull": Label("Virtualization", "Misconfiguration", 0.6),
    "pending": Label("Virtualization", "Dependency Problem", 0.45),
    "not_ready": Label("Application", "Code Defect", 0.45),
    "restarted": Label("Application", "Code Defect", 0.4),
    "unavailable": Label("Virtualization", "Operation Error", 0.4),
    "trace_errors": Label("Application", "Code Defect", 0.4),
    "slow_service": Label("Application", "Code Defect", 0.4),
    "cpu_hot": Label("Application", "Code Defect", 0.4),
    "packet_drops": Label("Virtualization", "Network/Storage Issue", 0.4),
    "recreated": Label("Application", "Code Defect", 0.2),
}
FAULT_THRESHOLD = 0.4  # at or above: something is wrong (detection says Yes)
ROOT_THRESHOLD = 0.8  # at or above: the root cause is identified (localise, analyse, fix)


def label(kind: str) -> Label:
    """Return the label of a symptom class (unknown classes are weak application symptoms).

    Example:
        >>> label("port_mismatch").system_level, label("whatever").confidence
        ('Virtualization', 0.3)
    """
    return LABELS.get(kind, Label("Application", "Code Defect", 0.3))
