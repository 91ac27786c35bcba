"""The mitigation verdicts' timing: AIOpsLab's at its own moment, the strict one after the system settles.

AIOpsLab ends the session and calls the problem's eval at once (orchestrator.py:183-188); most evals read the cluster
once, misconfig_app's polls every 5 s for up to 60 s (misconfig_app_hotel_res.py:171, service/kubectl.py:114-143).
The parity verdict keeps exactly those waits, on the backend's clock (simulated on the twin), so a crash-looping
container is judged in whatever state it is in at that moment, as AIOpsLab would. The strict verdict then lets
the system settle (bounded) and says how long that took: `strict_settle_seconds` in the results.
"""

from __future__ import annotations

import math
import time

from aoi.env.scenario import is_scenario
from aoi.env.scenario import judge as judge_scenario
from aoi.problems.model import Problem
from aoi.problems.oracles import OracleResult, parity_check, strict_check
from aoi.problems.parity import POLLS


def parity_verdict(problem: Problem, backend) -> OracleResult:
    """Return AIOpsLab's verdict at its own time: one read, or its polls with their sleeps on the backend's clock.

    Example (sketch; needs a started backend):
        parity_verdict(make("misconfig_app_hotel_res-mitigation-1"), env.backend).ok
    """
    sleep, max_wait = POLLS.get(problem.parity, (0.0, 0.0))
    pause = getattr(backend, "wait", time.sleep)  # the twin moves its clock; a real cluster takes real time
    kube = backend.kube  # the episode's admin client: every check reuses it, the episode closes it
    for _ in range(max(1, math.ceil(max_wait / sleep)) if sleep else 1):
        verdict = parity_check(problem, kube)
        if verdict.ok:
            return verdict
        if sleep:
            pause(sleep)  # AIOpsLab sleeps after every failed poll, the last one included
    return verdict


def judge_mitigation(problem: Problem, backend) -> tuple[OracleResult, float]:
    """Return the strict verdict (AIOpsLab's in its `parity`) and the seconds it waited after the episode ended.

    Example (sketch; needs a started backend):
        verdict, settled = judge_mitigation(env.problem, env.backend)
    """
    if is_scenario(problem):  # no AIOpsLab verdict exists: strict health plus no symptom, for both
        return judge_scenario(problem, backend)
    ended = backend.now()
    parity = parity_verdict(problem, backend)
    backend.settle()
    strict = strict_check(problem, backend.kube)
    return OracleResult(strict.ok, strict.reasons, parity.ok), round(backend.now() - ended, 3)
