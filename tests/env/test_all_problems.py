"""Every twin problem id, solved the way an SRE who knows the answer would: success and strict success.

Also: wrong answers, an empty mitigation and a fix of the wrong component fail.
"""

from __future__ import annotations

import pytest

from aoi.env import make
from aoi.problems import list_problems, solutions

TWIN_IDS = [p.id for p in list_problems() if p.backend == "twin"]


def live_texts(env) -> dict[str, str]:
    """Read what a fix edits (the mongod.conf or the flag file), as an SRE would with kubectl get."""
    p, kube = env.problem, env.backend.kube
    if p.fault.mechanism == "mongo_tls":
        cm = kube.get("configmaps", p.namespace, p.fault.expect["configmap"])
        return {"mongod.conf": cm["data"][p.fault.expect["key"]]}
    if p.fault.mechanism == "flagd_flag":
        return {"flags": kube.get("configmaps", p.namespace, "flagd-config")["data"]["demo.flagd.json"]}
    return {}


def play(problem_id: str, actions_for) -> dict:
    """Run one episode with the actions a function returns for the env; return the results."""
    env = make(problem_id)
    try:
        env.reset()
        info = {}
        for text in actions_for(env):
            _, _, terminated, _, info = env.step(text)
            if terminated:
                break
        return info["results"]
    finally:
        env.close()


def reference(env) -> list[str]:
    """Look around once, fix when it is a mitigation, then submit the right answer."""
    p = env.problem
    steps = [solutions.shell(f"kubectl get pods -n {p.namespace}")]
    if p.task_type == "mitigation":
        steps += solutions.mitigation(p, live_texts(env))
    return steps + [solutions.answer(p)]


def test_there_are_87_twin_problems():
    assert len(TWIN_IDS) == 87


@pytest.mark.parametrize("problem_id", TWIN_IDS)
def test_reference_solution_succeeds(problem_id):
    results = play(problem_id, reference)
    assert results.get("strict_success") is True, results
    assert results.get("success", results.get("Detection Accuracy") == "Correct") is True, results


WRONG = {"detection": solutions.action("submit", "No"), "localization": solutions.action("submit", ["jaeger"]),
         "analysis": solutions.action("submit", {"system_level": "Hardware", "fault_type": "Code Defect"})}


@pytest.mark.parametrize("problem_id", ["k8s_target_port-misconfig-detection-1", "revoke_auth_mongodb-localization-2",
                                        "wrong_bin_usage-analysis-1", "astronomy_shop_cart_service_failure-detection-1",
                                        "noop_detection_hotel_reservation-1"])
def test_wrong_answers_fail(problem_id):
    task = make(problem_id).problem.task_type
    wrong = WRONG[task] if "noop" not in problem_id else solutions.action("submit", "Yes")
    results = play(problem_id, lambda env: [wrong])
    assert results.get("strict_success") is False
    assert results.get("success") in (None, False)
    if task == "detection":
        assert results["Detection Accuracy"] == "Incorrect"


@pytest.mark.parametrize("problem_id", [p.id for p in list_problems(task_type="mitigation")])
def test_empty_mitigation_fails_strictly(problem_id):
    results = play(problem_id, lambda env: [solutions.action("submit")])
    assert results["strict_success"] is False


def test_fixing_the_wrong_component_fails():
    def wrong_fix(env):
        other = env.problem.valid_targets[1] if env.problem.valid_targets[0] == env.problem.target else \
            env.problem.valid_targets[0]
        return [solutions.shell(f"kubectl rollout restart deployment/{other} -n {env.problem.namespace}"),
                solutions.action("submit")]

    results = play("k8s_target_port-misconfig-mitigation-1", wrong_fix)
    assert results["success"] is False and results["strict_success"] is False
