"""Scenario problems in the Env: fault operations applied as admin at reset, mitigation judged by health + symptoms.

Every seed scenario is checked against the aoi.faults injector it renders: on the twin, its operations break the same
strict oracle the injector breaks, its symptoms show under both and not on the healthy app, and its solution commands,
run as the Executor, make the strict check pass again.
"""

from __future__ import annotations

import re

import pytest

from aoi.env.core import Env
from aoi.env.scenario import judge, symptoms_showing
from aoi.faults import FaultError
from aoi.problems import make
from aoi.problems.oracles import strict_check
from aoi.problems.scenarios import Scenario, problem_of
from aoi.problems.seeds import seed_scenarios
from aoi.problems.solutions import action, shell

NS = "test-hotel-reservation"
NOOP = {"hotel-reservation": "noop_detection_hotel_reservation-1", "social-network": "noop_detection_social_network-1",
        "astronomy-shop": "noop_detection_astronomy_shop-1"}


def scenario(**changes) -> Scenario:
    """Return a hand-made scenario: geo scaled to zero through an API patch."""
    obj = {
        "id": "geo-gone", "app": "hotel-reservation", "namespace": NS, "description": "geo scaled to zero",
        "fault": [{"api": {"verb": "patch", "kind": "Deployment", "name": "geo", "patch": {"spec": {"replicas": 0}}}}],
        "symptoms": [{"command": f"kubectl get deployment geo -n {NS}", "pattern": r"(?m)^geo\s+0/0\s",
                      "description": "geo wants no replicas"}],
        "root_cause": {"system_level": "Virtualization", "fault_type": "Operation Error", "components": ["geo"]},
        "diagnostic_commands": [f"kubectl get deployments -n {NS}"],
        "solution_commands": [f"kubectl scale deployment/geo -n {NS} --replicas=1"],
    }
    return Scenario.from_dict(obj | changes)


_HEALTHY: dict[str, Env] = {}


def healthy(app: str) -> Env:
    """Return a started episode of the app with no fault (one per app for the module)."""
    if app not in _HEALTHY:
        _HEALTHY[app] = Env(make(NOOP[app]))
        _HEALTHY[app].reset()
    return _HEALTHY[app]


@pytest.fixture(scope="module", autouse=True)
def _close_healthy():
    yield
    for env in _HEALTHY.values():
        env.close()


@pytest.mark.parametrize("seed", seed_scenarios(), ids=lambda s: s.id)
def test_a_seed_breaks_what_its_injector_breaks_and_its_solution_fixes_it(seed):
    original, problem = make(seed.source["problem_ids"][-1]), problem_of(seed, "mitigation")
    with Env(make(seed.source["problem_ids"][0])) as injected, Env(problem) as env:
        injected.reset()
        env.reset()
        assert strict_check(original, injected.backend.kube).ok == strict_check(original, env.backend.kube).ok
        assert symptoms_showing(problem, env.backend) and symptoms_showing(problem, injected.backend)
        assert symptoms_showing(problem, healthy(seed.app).backend) == []
        seen = [env.step(shell(command), role="probe")[0] for command in seed.diagnostic_commands]
        assert not [o for o in seen if o.startswith(("[ERROR]", "Error"))], seen
        assert any(re.search(s.pattern, o) for s in seed.symptoms for o in seen)  # the diagnostics show the fault
        for command in seed.solution_commands:
            observation, *_ = env.step(shell(command), role="executor")
            assert not observation.startswith(("[ERROR]", "Error")), observation
        *_, info = env.step(action("submit"))
        assert info["results"]["success"] and info["results"]["strict_success"]
        assert strict_check(original, env.backend.kube).ok


def test_each_task_type_of_a_scenario_is_answered_from_its_root_cause():
    answers = {"detection": "Yes", "localization": ["geo"],
               "analysis": {"system_level": "Virtualization", "fault_type": "Operation Error"}}
    for task, answer in answers.items():
        with Env(problem_of(scenario(), task)) as env:
            observation, info = env.reset()
            assert info["problem_id"] == f"scenario:geo-gone-{task}" and "Hotel Reservation" in observation
            *_, info = env.step(action("submit", answer))
            assert info["results"]["strict_success"], info["results"]


def test_a_fix_that_leaves_the_symptom_fails_and_says_which():
    with Env(problem_of(scenario(), "mitigation")) as env:
        env.reset()
        env.step(shell(f"kubectl rollout restart deployment/frontend -n {NS}"), role="executor")
        verdict, _ = judge(env.problem, env.backend)
        *_, info = env.step(action("submit"))
    assert not verdict.ok and any(r.startswith("symptom still shows: geo wants no replicas") for r in verdict.reasons)
    assert info["results"]["success"] is False and info["results"]["strict_success"] is False


def test_a_failing_fault_operation_names_itself():
    broken = scenario(fault=[{"kubectl": f"kubectl scale deployment/nowhere -n {NS} --replicas=0"}])
    with Env(problem_of(broken, "detection")) as env, pytest.raises(FaultError, match=r"fault/0: `kubectl scale"):
        env.reset()
    missing = scenario(fault=[{"api": {"verb": "delete", "kind": "Service", "name": "nowhere"}}])
    with Env(problem_of(missing, "detection")) as env, pytest.raises(FaultError, match="404"):
        env.reset()
