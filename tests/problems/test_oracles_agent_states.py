"""Judges never crash on states an agent can leave behind: each hostile change, then submit, gives a verdict.

For every mitigation problem an episode is reset, a few hostile changes are made through the admin kubeconfig (the
same API an agent's kubectl uses), and `env.step(submit)` must return results with boolean verdicts that `judge`
gives again on the state left behind, with a reason for every failure (a change may also happen to undo the fault).

Chosen to keep the run under a minute: each problem gets 3 changes in turn (every change but one lands on two
problems or more; the full cross product of 14 problems x 18 changes is ~250 episodes), and the problems whose own
oracle parses a file (mongod.conf, the flagd flag file) get every file change. 1000 replicas run on one problem
only: the twin takes minutes to simulate 1000 MongoDBs or 1000 pods in image-pull back-off.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kubernetes.client.exceptions import ApiException

from aoi.env import make as make_env
from aoi.kube import Kube
from aoi.problems import make, problem_ids
from aoi.problems.oracles import judge
from aoi.problems.solutions import action

CONFIG_TEXTS = {  # what a ConfigMap key can be patched to (ConfigMap data are strings, so junk is text here)
    "invalid YAML": "net:\n  tls: [requireTLS\n    mode: : :\n", "a YAML list": "- net\n- tls\n",
    "a scalar": "just some words", "binary junk": "\x00\x01\x7f\ufffd\ufeff{[\x1b", "empty": "",
}
MITIGATION = [i for i in problem_ids() if make(i).task_type == "mitigation"]
FILE_ORACLES = ("mongo_tls", "flagd_flag")  # mechanisms whose strict check parses a ConfigMap file
PER_PROBLEM = 3
# 1000 replicas are cheap only where the pods stay Pending (nothing to schedule on): 1000 MongoDBs or 1000 pods in
# image-pull back-off take the twin minutes to simulate, so this change runs on one problem only
HUGE_ON = ("assign_to_non_existent_node_social_net-mitigation-1",)


def _deployment(kube: Kube, ns: str, target: str | None) -> str:
    """Return the problem's target Deployment, else the namespace's first one."""
    names = [d["metadata"]["name"] for d in kube.list("deployments", ns)]
    return target if target in names else names[0]


def _config(kube: Kube, ns: str, target: str | None) -> tuple[str, str]:
    """Return (ConfigMap, key) of a file the target's pods mount, else the namespace's first ConfigMap key."""
    spec = kube.get("deployments", ns, _deployment(kube, ns, target))["spec"]["template"]["spec"]
    mounted = [v["configMap"]["name"] for v in spec.get("volumes") or [] if v.get("configMap")]
    maps = kube.list("configmaps", ns)
    chosen = next((m for m in maps if m["metadata"]["name"] in mounted and m.get("data")),
                  next(m for m in maps if m.get("data")))
    return chosen["metadata"]["name"], sorted(chosen["data"])[0]


def _file_of(problem) -> Callable[[Kube, str, str | None], tuple[str, str]]:
    """Return how to find the file to corrupt: the one the oracle parses, else one the target mounts."""
    expect = problem.fault.expect
    if problem.fault.mechanism in FILE_ORACLES:
        return lambda kube, ns, target: (expect["configmap"], expect["key"])
    return _config


def set_file(text: str):
    """Return a change that writes `text` into a mounted file and restarts the pods that read it."""
    def change(kube: Kube, ns: str, target: str | None, where) -> None:
        name, key = where(kube, ns, target)
        kube.patch("configmaps", ns, name, {"data": {key: text}}, how="merge")
        kube.delete_pods(ns, kube.pods_of("deployments", ns, _deployment(kube, ns, target)))
    return change


def drop_data(kube, ns, target, where) -> None:
    name, _ = where(kube, ns, target)
    kube.patch("configmaps", ns, name, {"data": None}, how="merge")


def patch_deployment(body, how: str = "merge"):
    """Return a change that patches the target Deployment."""
    def change(kube, ns, target, where) -> None:
        kube.patch("deployments", ns, _deployment(kube, ns, target), body, how=how)
    return change


def patch_service(body, how: str = "merge"):
    """Return a change that patches the Service named like the target Deployment (or the first Service)."""
    def change(kube, ns, target, where) -> None:
        names = [s["metadata"]["name"] for s in kube.list("services", ns)]
        name = target if target in names else names[0]
        kube.patch("services", ns, name, body, how=how)
    return change


def delete(kind: str):
    """Return a change that deletes one object of a resource kind: the target's, else the namespace's first."""
    def change(kube, ns, target, where) -> None:
        if kind == "namespaces":
            kube.delete("namespaces", None, ns)
            return
        if kind == "configmaps":
            kube.delete("configmaps", ns, where(kube, ns, target)[0])
            return
        names = [o["metadata"]["name"] for o in kube.list(kind, ns)]
        if names:
            kube.delete(kind, ns, target if target in names else names[0])
    return change


HOSTILE = {
    **{f"file set to {what}": set_file(text) for what, text in CONFIG_TEXTS.items()},
    "ConfigMap data removed": drop_data,
    "Deployment deleted": delete("deployments"), "Service deleted": delete("services"),
    "ConfigMap deleted": delete("configmaps"), "Secret deleted": delete("secrets"),
    "namespace deleted": delete("namespaces"),
    "replicas null": patch_deployment({"spec": {"replicas": None}}),
    "replicas 0": patch_deployment({"spec": {"replicas": 0}}),
    "replicas huge": patch_deployment({"spec": {"replicas": 1000}}),
    "containers removed": patch_deployment([{"op": "replace", "path": "/spec/template/spec/containers", "value": []}],
                                           "json"),
    "container ports removed": patch_deployment(
        [{"op": "remove", "path": "/spec/template/spec/containers/0/ports"}], "json"),
    "Service ports removed": patch_service([{"op": "remove", "path": "/spec/ports"}], "json"),
    "Service selector changed": patch_service({"spec": {"selector": {"app": "nothing-has-this-label"}}}),
}


def changes_for(problem_id: str) -> list[str]:
    """Return the hostile changes one problem gets: PER_PROBLEM of HOSTILE in turn, plus every file one."""
    names, index = [n for n in HOSTILE if n != "replicas huge"], MITIGATION.index(problem_id)
    picked = [names[(index * PER_PROBLEM + k) % len(names)] for k in range(PER_PROBLEM)]
    picked += ["replicas huge"] if problem_id in HUGE_ON else []
    if make(problem_id).fault.mechanism in FILE_ORACLES:
        picked += [n for n in names if n.startswith("file set to") or n == "ConfigMap data removed"]
    return list(dict.fromkeys(picked))


CASES = [(pid, change) for pid in MITIGATION for change in changes_for(pid)]


def test_every_hostile_change_is_tried_on_two_problems_or_more():
    used = [change for _, change in CASES]
    assert {name: used.count(name) for name in HOSTILE if used.count(name) < 2} == {"replicas huge": len(HUGE_ON)}


@pytest.fixture(scope="module")
def envs():
    """One Env per problem id, reset before each use (a reset clones the settled app: about a second)."""
    made: dict = {}
    yield lambda pid: made.setdefault(pid, make_env(pid))
    for env in made.values():
        env.close()


@pytest.mark.parametrize("problem_id,change", CASES, ids=[f"{p}:{c}" for p, c in CASES])
def test_submit_after_a_hostile_change_gives_a_verdict(envs, problem_id, change):
    env = envs(problem_id)
    env.reset()
    problem = env.problem
    kube = env.backend.kube  # the episode's own admin client, as its judges use
    try:
        HOSTILE[change](kube, problem.namespace, problem.target, _file_of(problem))
    except ApiException as exc:  # the API refused the change (a real cluster would too): the state is unchanged
        assert exc.status in (404, 409, 422), exc
    _, _, terminated, _, info = env.step(action("submit"))
    results = info["results"]
    assert terminated and isinstance(results["success"], bool) and isinstance(results["strict_success"], bool)
    verdict = judge(problem, kube)  # the state the strict verdict saw, judged again
    assert verdict.ok == results["strict_success"]  # AIOpsLab's verdict came earlier, at the episode's end
    assert verdict.ok or (verdict.reasons and all(isinstance(r, str) and r for r in verdict.reasons))


@pytest.mark.parametrize("task", ["detection-1", "localization-1", "analysis-1"])
def test_answers_are_scored_after_the_namespace_is_deleted(task):
    env = make_env(f"k8s_target_port-misconfig-{task}")
    try:
        env.reset()
        env.backend.kube.delete("namespaces", None, env.problem.namespace)
        _, _, terminated, _, info = env.step(action("submit", "Yes"))
        assert terminated and isinstance(info["results"]["strict_success"], bool)
    finally:
        env.close()
