"""The AIOpsLab problems exported as seed scenarios: one per fault family and target, the fault as kubectl/API ops.

Each seed renders what the family's aoi.faults injector does as the operations an admin would type, with symptoms
that show only while the fault is in place (aoi.problems.seed_faults); its solution is the reference
mitigation of aoi.problems.solutions (or, for Chaos Mesh faults, deleting the chaos object). Families a scenario
cannot express are skipped and listed by `skipped()`.
"""

from __future__ import annotations

import functools
import re

from aoi.problems import solutions
from aoi.problems.families import FAMILIES
from aoi.problems.model import TWIN, Family, Problem
from aoi.problems.registry import make
from aoi.problems.scenarios import RootCause, Scenario
from aoi.problems.seed_faults import RENDER, chaos_object, flags_text, kubectl, tls_conf

# Root causes AIOpsLab gives no analysis task for (system level, fault type): AOI's reading of the fault. A flag is
# a value in flagd's ConfigMap, set and fixed there: AIOpsLab labels its other config-file fault (auth_miss_mongodb,
# mongod.conf) Application/Misconfiguration, so flags get the same.
ANALYSIS = {"pod_chaos": ("Virtualization", "Operation Error"),
            "network_chaos": ("Virtualization", "Network/Storage Issue"),
            "flagd_flag": ("Application", "Misconfiguration")}
NOT_EXPORTED = {
    "noop": "injects no fault, so it has no symptom or solution to write down",
    "redeploy_without_pv": "deletes and re-creates the whole namespace and is fixed by patching cluster-scoped "
                           "PersistentVolumes: both outside a scenario's scope",
}
EXEC = re.compile(r'exec_shell\("(.*)"\)', re.S)


def _solution(p: Problem) -> list[str]:
    """Return the reference fix as kubectl command lines."""
    if p.fault.mechanism in ("pod_chaos", "network_chaos"):
        body = chaos_object(p)
        return [kubectl("delete", body["kind"].lower(), body["metadata"]["name"], "-n", p.namespace)]
    read = {"mongod.conf": tls_conf(p)} if p.fault.mechanism == "mongo_tls" else {}
    if p.fault.mechanism == "flagd_flag":
        read = {"flags": flags_text(p, p.fault.params["variant"])}
    return [EXEC.search(step).group(1).replace('\\"', '"') for step in solutions.mitigation(p, read)]


def _diagnostics(p: Problem, symptoms: list) -> list[str]:
    """Return read-only commands that show the fault to someone who looks (the symptoms' own commands last)."""
    ns, found = p.namespace, [kubectl("get", "pods", "-n", p.namespace),
                              kubectl("get", "events", "-n", p.namespace, "--sort-by=.lastTimestamp")]
    kind = {"target_port": "service", "pod_chaos": "podchaos", "network_chaos": "networkchaos",
            "mongo_tls": "configmap", "flagd_flag": "configmap"}.get(p.fault.mechanism, "deployment")
    name = {"configmap": p.fault.expect.get("configmap"), "podchaos": None, "networkchaos": None}.get(kind, p.target)
    name = name or chaos_object(p)["metadata"]["name"]  # a chaos object is named by its action, not its target
    found.append(kubectl("describe", kind, name, "-n", ns))
    running = p.fault.mechanism in ("image", "command", "pod_chaos", "network_chaos")  # pods that have logs to show
    found += [kubectl("logs", f"deploy/{d}", "-n", ns, "--tail", "50") for d in p.fault.expect.get(
        "dependents", [p.target] if running else [])]
    return list(dict.fromkeys(found + [s.command for s in symptoms]))


def _seed(family: Family, n: int) -> Scenario:
    """Return the seed scenario of one numbered instance of a family."""
    p = make(family.id_format.format(task=family.tasks[-1], n=n))
    ops, symptoms = RENDER[family.mechanism](p)
    level, kind = family.analysis or ANALYSIS[family.mechanism]
    suffix = "" if family.mechanism == "flagd_flag" else f"-{p.target}"
    ids = [family.id_format.format(task=task, n=n) for task in family.tasks]
    return Scenario(id=re.sub(r"[^a-z0-9-]+", "-", f"{family.name}{suffix}".lower()).strip("-"), app=p.app,
                    namespace=p.namespace, description=f"AIOpsLab {family.name} on {p.target} ({family.mechanism})",
                    fault=tuple(ops), symptoms=tuple(symptoms),
                    root_cause=RootCause(level, kind, tuple(p.answers.localization)),
                    diagnostic_commands=tuple(_diagnostics(p, symptoms)), solution_commands=tuple(_solution(p)),
                    source={"seed": ids[0], "problem_ids": ids, "family": family.name, "target": p.target})


@functools.cache
def _export() -> tuple[tuple[Scenario, ...], tuple[str, ...]]:
    scenarios, notes = [], []
    for family in FAMILIES:
        reason = ("needs the aiopslab backend (a Docker Compose app the twin does not simulate)"
                  if family.backend != TWIN else NOT_EXPORTED.get(family.mechanism))
        if reason:
            notes.append(f"{family.name} ({family.app}): {reason}")
            continue
        scenarios += [_seed(family, n) for n in range(1, len(family.targets) + 1)]
    return tuple(scenarios), tuple(notes)


def seed_scenarios() -> list[Scenario]:
    """Return the seed scenarios, one per AIOpsLab fault family and target the twin runs.

    Example:
        >>> [s.id for s in seed_scenarios()][:2]
        ['k8s-target-port-misconfig-user-service', 'k8s-target-port-misconfig-text-service']
    """
    return list(_export()[0])


def skipped() -> list[str]:
    """Return the families not exported, each with the reason."""
    return list(_export()[1])
