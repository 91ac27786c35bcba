"""Golden tests (kwok style) of each fault family's visible symptoms, as an agent sees them right after injection.

For one problem per family (its mitigation id where it has one, seed 0) the test plays the environment's own
actions: `kubectl get pods`, the Warning events, the faulty service's logs (error and last lines), then records the
strict verdict before any fix. The record must equal `golden/<family>.yaml`; after an intended behaviour change,
rewrite the files with `pytest --update-golden`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from aoi.env import make
from aoi.kube import Kube
from aoi.problems import list_problems
from aoi.problems.families import FLAG_ANSWERS
from aoi.problems.oracles import strict_check

GOLDEN = Path(__file__).parent / "golden"
SEED = 0
MAX_LINES = 40  # lines kept of one command's output
KEY_LINE = re.compile(r"error|fail|refused|denied|unauthori[sz]ed|exception|panic|timeout|fatal|warn", re.I)
MAX_KEY_LINES = 8
LAST_LINES = 3


def representatives() -> dict[str, str]:
    """Return family -> problem id: the family's first mitigation id, else its first twin id."""
    chosen: dict[str, str] = {}
    for problem in list_problems():
        if problem.backend != "twin":
            continue
        if problem.family not in chosen or (problem.task_type == "mitigation" and "mitigation" not in
                                            chosen[problem.family]):
            chosen[problem.family] = problem.id
    return chosen


FAMILIES = representatives()


def fenced(call: str) -> str:
    """Return one action in AIOpsLab's text format."""
    return f"```\n{call}\n```"


def observe(env, call: str) -> list[str]:
    """Play one action; return the observation's lines without the trailing prompt for the next action."""
    observation = env.step(fenced(call))[0]
    lines = observation.splitlines()
    while lines and (not lines[-1].strip() or lines[-1] == "Please take the next action"):
        lines.pop()
    return lines


def capped(lines: list[str], limit: int = MAX_LINES) -> list[str]:
    """Return at most `limit` lines, saying how many were left out."""
    return lines if len(lines) <= limit else lines[:limit] + [f"... ({len(lines) - limit} more lines)"]


def log_service(problem) -> str:
    """Return the service whose logs show the fault: the target, the service behind a flag, else the entry."""
    if problem.fault.mechanism == "flagd_flag":
        return FLAG_ANSWERS[problem.target]
    if problem.target:
        return problem.target
    return problem.workload.service if problem.workload else "frontend"


def symptoms(env) -> dict:
    """Return what the agent sees of the injected fault, and the strict verdict before any fix."""
    p, ns = env.problem, env.problem.namespace
    pods = observe(env, f'exec_shell("kubectl get pods -n {ns}")')
    events = observe(env, f'exec_shell("kubectl get events -n {ns} --field-selector type=Warning '
                          f'-o custom-columns=REASON:.reason,OBJECT:.involvedObject.name,COUNT:.count")')
    service = log_service(p)
    logs = observe(env, f"get_logs({ns!r}, {service!r})")
    key = list(dict.fromkeys(line for line in logs if KEY_LINE.search(line)))  # repeats say nothing new
    with Kube.from_kubeconfig(env.backend.admin_kubeconfig()) as kube:  # an admin's read, as the judge does
        verdict = strict_check(p, kube)
    return {"problem": p.id, "seed": SEED, "target": p.target, "namespace": ns,
            "kubectl_get_pods": capped(pods), "warning_events": capped(events),
            "warning_reasons": sorted({line.split()[0] for line in events[1:] if line.split()}),
            "logs": {"service": service, "lines": len(logs), "error_lines": capped(key, MAX_KEY_LINES),
                     "last_lines": logs[-LAST_LINES:]},
            "strict_before_fix": {"ok": verdict.ok, "reasons": capped(list(verdict.reasons))}}


def play(problem_id: str, workdir: Path) -> dict:
    """Start the problem's episode (fault injected) and return its symptoms."""
    with make(problem_id, workdir=workdir) as env:
        _task, info = env.reset(seed=SEED)
        assert info["seed"] == SEED and info["problem_id"] == problem_id
        return symptoms(env)


def render(family: str, record: dict) -> str:
    """Return the golden text of one family."""
    head = f"# visible symptoms of fault family `{family}` after injection (tests/faults/test_symptoms_golden.py)\n"
    return head + yaml.safe_dump(record, sort_keys=False, width=200, allow_unicode=True)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_symptoms_match_golden(family, tmp_path, golden):
    golden(GOLDEN / f"{family}.yaml", render(family, play(FAMILIES[family], tmp_path / "episode")))


def test_golden_files_match_the_families():
    """Every golden file belongs to a family (a renamed family leaves no stale file behind)."""
    assert sorted(p.stem for p in GOLDEN.glob("*.yaml")) == sorted(FAMILIES)
