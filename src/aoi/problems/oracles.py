"""Mitigation oracles: AIOpsLab's own verdict (parity) and ours (strict), read through the Kubernetes API.

Both take a problem and the episode's admin `aoi.kube.Kube` (one client per episode, whatever the number of checks)
and return an OracleResult. They read a snapshot: callers let the system settle first (the twin advances simulated
time; AIOpsLab itself polls some checks for up to 60 s).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import yaml
from kubernetes.client.exceptions import ApiException

from aoi.kube import Kube
from aoi.problems.model import Problem
from aoi.problems.parity import PARITY
from aoi.problems.strict import RESTORED, health, one_line


@dataclass(frozen=True)
class OracleResult:
    """A mitigation verdict: `ok`, and `reasons` saying what is still wrong.

    `parity` carries AIOpsLab's verdict next to the strict one when both were judged together (`judge`); it is
    None on a result of a single check.
    """

    ok: bool
    reasons: tuple[str, ...] = ()
    parity: bool | None = None

    @classmethod
    def of(cls, reasons: list[str]) -> OracleResult:
        """Return a result that is ok when there is nothing wrong."""
        return cls(not reasons, tuple(reasons))


def _safely(check: Callable[[Kube, Problem], list[str]], kube: Kube, problem: Problem) -> list[str]:
    """Run a check; an API error (a deleted object, a refused read) becomes a reason, never a crash."""
    try:
        return check(kube, problem)
    except ApiException as exc:
        return [f"could not read the cluster for {problem.id}: {exc.status} {exc.reason}"]
    except (LookupError, AttributeError, TypeError, ValueError, RecursionError, yaml.YAMLError) as exc:
        # agents can leave any state behind (odd specs, unparsable files): a judge says so and never raises
        return [f"unexpected cluster state for {problem.id}: {type(exc).__name__}: {one_line(exc)}"]


def parity_check(problem: Problem, kube: Kube) -> OracleResult:
    """Return AIOpsLab's mitigation verdict for the problem, holes included.

    Example (sketch; needs a cluster):
        parity_check(make("scale_pod_zero_social_net-mitigation-1"), Kube.from_kubeconfig("admin.yaml")).ok
    """
    return OracleResult.of(_safely(PARITY[problem.parity], kube, problem))


def strict_check(problem: Problem, kube: Kube) -> OracleResult:
    """Return the strict verdict: the faulted component restored, and every pod and Deployment healthy."""
    restored = RESTORED.get(problem.fault.mechanism)
    reasons = _safely(restored, kube, problem) if restored else []
    reasons += [r for r in _safely(lambda k, p: health(k, p.namespace), kube, problem) if r not in reasons]
    return OracleResult.of(reasons)


def judge(problem: Problem, kube: Kube) -> OracleResult:
    """Return the strict verdict with AIOpsLab's verdict in `parity`: what `aoi.env.scoring.score` expects."""
    strict = strict_check(problem, kube)
    return OracleResult(strict.ok, strict.reasons, parity_check(problem, kube).ok)
