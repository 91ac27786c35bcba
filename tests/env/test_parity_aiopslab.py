"""Parity with AIOpsLab's own code (github:microsoft/AIOpsLab at ddf7e40; file:line cited at each test).

Each test states what AIOpsLab's code does and checks that the twin env does the same.
"""

from __future__ import annotations

import json

import pytest

from aoi.env import make
from aoi.problems import make as make_problem
from aoi.problems import solutions
from aoi.problems.parity import PARITY

NEXT = "Please take the next action"  # AIOpsLab's orchestrator appends it to every observation but the last
NS = "test-hotel-reservation"


@pytest.fixture(scope="module")
def detection():
    env = make("wrong_bin_usage-detection-1", max_steps=3)
    yield env
    env.close()


# --- gap 1: a submit AIOpsLab's signature refuses answers the TypeError and the episode goes on ---
# orchestrator.py:126-127 stores the solution, :130 calls the task's submit (actions/detection.py:16-18 is a static
# submit(has_anomaly)), :137-138 answers any exception with str(e), :168-173 only a VALID_SUBMISSION ends the loop.

@pytest.mark.parametrize("problem_id, reply, error", [
    ("wrong_bin_usage-detection-1", "submit('Yes', 'No')",
     "DetectionActions.submit() takes 1 positional argument but 2 were given"),
    ("wrong_bin_usage-detection-1", "submit(answer='Yes')",
     "DetectionActions.submit() got an unexpected keyword argument 'answer'"),
    ("wrong_bin_usage-localization-1", "submit()",
     "LocalizationActions.submit() missing 1 required positional argument: 'faulty_components'"),
    ("wrong_bin_usage-analysis-1", "submit('Application', 'Misconfiguration')",
     "AnalysisActions.submit() takes 1 positional argument but 2 were given"),
    ("wrong_bin_usage-mitigation-1", "submit('done')",
     "MitigationActions.submit() takes 0 positional arguments but 1 was given"),
])
def test_a_refused_submit_answers_the_error_and_the_episode_goes_on(problem_id, reply, error):
    env = make(problem_id, max_steps=5)
    try:
        env.reset()
        observation, reward, terminated, truncated, info = env.step(f"```\n{reply}\n```")
        assert observation == f"{error}\n{NEXT}"
        assert (reward, terminated, truncated, info["steps"]) == (0.0, False, False, 1)
        observation = env.step(solutions.answer(env.problem))[0]
        assert observation == "1" and env.done and env.results["steps"] == 2  # the refused submit was charged
    finally:
        env.close()


def test_wrong_types_are_accepted_and_judged_by_the_eval(detection):
    # actions/detection.py:28-29 checks nothing; tasks eval judges a non-string as "Invalid Format"
    detection.reset()
    observation, _, terminated, _, info = detection.step(solutions.action("submit", ["Yes"]))
    assert observation == "1" and terminated and info["results"]["Detection Accuracy"] == "Invalid Format"


def test_a_refused_submit_leaves_its_solution_for_the_eval(detection):
    # the solution is stored before submit is called (orchestrator.py:126-127) and eval reads session.solution
    # after max_steps (orchestrator.py:186-188): a refused submit("Yes", extra=1) still scores "Correct" there.
    # The strict verdict gives no credit to an answer that was never accepted.
    detection.reset()
    assert "unexpected keyword argument 'extra'" in detection.step("```\nsubmit('Yes', extra=1)\n```")[0]
    detection.step(solutions.shell(f"kubectl get pods -n {NS}"))
    *_, truncated, info = detection.step(solutions.shell(f"kubectl get deploy -n {NS}"))
    assert truncated and info["results"]["Detection Accuracy"] == "Correct"
    assert info["results"]["steps"] == 3 and info["results"]["strict_success"] is False


# --- gap 4: exec_shell returns the whole output ---
# actions/base.py:80-111 returns Shell.exec's text as it is; service/shell.py has no cut.

def test_exec_shell_returns_the_whole_output(detection):
    detection.reset()
    done = detection.backend.runners["admin"].run(["get", "pods", "-n", NS, "-o", "yaml"])
    assert len(done.stdout) > 40_000  # longer than the cut the env used to make
    observation = detection.step(solutions.shell(f"kubectl get pods -n {NS} -o yaml"))[0]
    assert observation == done.stdout + "\n" + NEXT


# --- gap 3: wrong_bin_usage's own waiting rule ---
# wrong_bin_usage/wrong_bin_usage.py:172-183 branches on `state.waiting` alone: a waiting container fails only for
# CrashLoopBackOff, Error, ImagePullBackOff or ErrImagePull, and any other waiting reason is not tested for
# readiness. The other checks (e.g. revoke_auth/revoke_auth.py:174-202) test `waiting and reason ==
# "CrashLoopBackOff"` as one condition, so another waiting reason falls through to `not ready` and fails.

class Pods:
    """A scripted cluster view (aoi.kube.Kube's list/get, plain dicts): the pods and the profile Deployment
    wrong_bin_usage's eval reads."""

    def __init__(self, waiting: str | None, command: list[str]):
        state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
        status = {"name": "hotel-reserv-profile", "ready": not waiting, "restartCount": 0, "state": state}
        self.pod = {"metadata": {"name": "profile-1"}, "status": {"containerStatuses": [status]}}
        done = {"name": "c", "ready": False, "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        self.job = {"metadata": {"name": "wrk2-1"}, "status": {"containerStatuses": [done]}}
        self.dep = {"spec": {"selector": {"matchLabels": {"io.kompose.service": "profile"}},
                             "template": {"spec": {"containers": [{"name": "p", "command": command}]}}}}

    def list(self, kind, namespace=None, **query):
        assert kind == "pods"
        return [self.pod]

    def get(self, kind, namespace, name):
        assert kind == "deployments"
        return self.dep


@pytest.mark.parametrize("waiting, wrong_bin_ok, common_ok", [
    ("ContainerCreating", True, False),
    ("CreateContainerConfigError", True, False),
    ("PodInitializing", True, False),
    ("CrashLoopBackOff", False, False),
    ("ErrImagePull", False, False),
    ("ImagePullBackOff", False, False),
    ("Error", False, False),
    (None, True, True),
])
def test_wrong_bin_usage_judges_waiting_containers_as_aiopslab_does(waiting, wrong_bin_ok, common_ok):
    problem = make_problem("wrong_bin_usage-mitigation-1")
    cluster = Pods(waiting, ["profile"])
    assert (PARITY["wrong_bin"](cluster, problem) == []) is wrong_bin_ok
    assert (PARITY["pods_normal"](cluster, problem) == []) is common_ok


def test_wrong_bin_usage_still_checks_the_command():
    problem = make_problem("wrong_bin_usage-mitigation-1")
    assert PARITY["wrong_bin"](Pods("ContainerCreating", ["geo"]), problem)  # wrong_bin_usage.py:197-204


def test_a_completed_container_that_is_not_ready_fails_both_chains():
    # terminated Completed skips the terminated branch, then `not ready` fails (revoke_auth.py:181-189)
    problem, cluster = make_problem("wrong_bin_usage-mitigation-1"), Pods(None, ["profile"])
    cluster.pod = cluster.job
    assert PARITY["wrong_bin"](cluster, problem) and PARITY["pods_normal"](cluster, problem)


# --- gap 2: the mitigation verdict at AIOpsLab's time ---
# orchestrator.py:183-188 ends the session, then calls eval at once; misconfig_app's eval polls
# kubectl.wait_for_ready(ns, sleep=5, max_wait=60) (misconfig_app_hotel_res.py:171): list pods, succeed when every pod
# is Succeeded or has all containers ready (kubectl.py:102-112, :127-135), else sleep 5 s; give up after 60 s
# (:123-143). The other mitigation evals read the cluster once (e.g. scale_pod_social_net.py:182-222).

def aiopslab_poll(env) -> int | None:
    """Replay wait_for_ready by hand on the twin's clock; return the poll that saw every pod ready, or None."""
    for poll in range(12):  # wait = 0, 5, ..., 55 < 60
        done = env.backend.runners["admin"].run(["get", "pods", "-n", env.problem.namespace, "-o", "json"])
        pods = json.loads(done.stdout)["items"]
        if pods and all(p["status"].get("phase") == "Succeeded" or (p["status"].get("containerStatuses") and all(
                c["ready"] for c in p["status"]["containerStatuses"])) for p in pods):
            return poll
        env.backend.wait(5.0)
    return None


def play_until_submit(problem_id: str, actions: list[str], seconds_per_step: float = 15.0):
    """Play the actions on a fresh env (seed 0); return it, ready for the verdict or a submit."""
    env = make(problem_id, seed=0)
    env.seconds_per_step = seconds_per_step
    env.reset()
    for text in actions:
        env.step(text)
    return env


def test_a_crash_looping_non_fix_is_judged_by_aiopslabs_polls_and_fails_strictly():
    restart = [solutions.shell(f"kubectl delete pod -n {NS} -l io.kompose.service=geo")]  # geo:app3 stays
    by_hand = play_until_submit("misconfig_app_hotel_res-mitigation-1", restart + [solutions.action("submit")])
    env = play_until_submit("misconfig_app_hotel_res-mitigation-1", restart)
    try:
        env.backend.tick(env.seconds_per_step)  # the submit's step, as env.step ticks before the verdict
        poll = aiopslab_poll(env)
    finally:
        env.close()
    results = by_hand.results
    by_hand.close()
    assert poll is not None and poll > 0  # geo crash-loops: a later poll caught it ready, the first did not
    assert results["success"] is True  # AIOpsLab's verdict at that moment, hole included
    assert results["strict_success"] is False  # the image is still geo:app3 and geo keeps crashing
    assert results["strict_settle_seconds"] >= 5.0 * poll


def test_a_verdict_that_reads_once_reads_at_the_moment_the_episode_ends():
    scale = [solutions.shell("kubectl scale deployment/user-service -n test-social-network --replicas=1")]
    env = play_until_submit("scale_pod_zero_social_net-mitigation-1", scale, seconds_per_step=0.0)
    try:
        available = env.step(solutions.shell("kubectl get deploy user-service -n test-social-network -o "
                                             "jsonpath={.status.availableReplicas}"))[0]
        *_, info = env.step(solutions.action("submit"))
    finally:
        env.close()
    assert available == "\n" + NEXT  # no replica available yet at that moment: scale_pod_social_net.py:191 fails it
    results = info["results"]
    assert results["success"] is False and results["strict_success"] is True and results["strict_settle_seconds"] > 0
    assert results["TTM"] == info["sim_time"]  # the verdicts' waits are not the agent's time (orchestrator.py:183)
